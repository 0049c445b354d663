/**
 * src/core/observe/log.ts Log: the leveled wrapper around a merchant's logger. Which levels a
 * `logLevel` lets through, the argument order for console/winston and for pino (the real one),
 * the console when no logger was given, one-time warnings, and that a logger that throws never
 * throws into the SDK.
 */
import pino from 'pino';
import { describe, expect, it, vi } from 'vitest';
import { consoleWarn, Log, type LogLevel } from '../../../../src/core/observe/log.js';

const LEVELS = ['debug', 'info', 'warn', 'error'] as const;

function recordingLogger() {
  const calls: { level: LogLevel; args: unknown[] }[] = [];
  const at =
    (level: LogLevel) =>
    (...args: unknown[]) =>
      void calls.push({ level, args });
  return { calls, logger: { debug: at('debug'), info: at('info'), warn: at('warn'), error: at('error') } };
}

describe('levels', () => {
  it.each([
    ['debug', ['debug', 'info', 'warn', 'error']],
    ['info', ['info', 'warn', 'error']],
    ['warn', ['warn', 'error']],
    ['error', ['error']],
    ['off', []],
    [undefined, ['warn', 'error']],
  ] as const)('logLevel %s lets through %j', (level, expected) => {
    const { calls, logger } = recordingLogger();
    const log = new Log(logger, level);
    expect(LEVELS.filter((l) => log.enabled(l))).toEqual(expected);
    for (const l of LEVELS) log.write(l, `a ${l} line`);
    expect(calls.map((c) => c.level)).toEqual(expected);
  });
});

describe('write', () => {
  it('calls a console/winston-shaped logger as (message, fields), the message prefixed with myr-gateway', () => {
    const { calls, logger } = recordingLogger();
    const fields = { method: 'POST', path: '/payment/request', attempt: 1 };
    new Log(logger, 'debug').write('info', 'POST /payment/request 200 in 12 ms (1 attempt)', fields);
    expect(calls).toEqual([
      { level: 'info', args: ['myr-gateway: POST /payment/request 200 in 12 ms (1 attempt)', fields] },
    ]);
  });

  it('passes the message alone when there are no fields', () => {
    const { calls, logger } = recordingLogger();
    new Log(logger, 'warn').write('warn', 'the token store is slow');
    expect(calls).toEqual([{ level: 'warn', args: ['myr-gateway: the token store is slow'] }]);
  });

  it('calls the method on the logger itself, so a logger that uses `this` works', () => {
    class ClassLogger {
      readonly seen: string[] = [];
      #push(m: unknown) {
        this.seen.push(String(m));
      }
      debug(m: unknown) {
        this.#push(m);
      }
      info(m: unknown) {
        this.#push(m);
      }
      warn(m: unknown) {
        this.#push(m);
      }
      error(m: unknown) {
        this.#push(m);
      }
    }
    const logger = new ClassLogger();
    new Log(logger, 'debug').write('debug', 'attempt 1');
    expect(logger.seen).toEqual(['myr-gateway: attempt 1']);
  });

  it('calls a real pino logger as (fields, message): the fields land in the JSON line and the message in msg', () => {
    const out: Record<string, unknown>[] = [];
    const logger = pino(
      { level: 'debug' },
      { write: (line: string) => void out.push(JSON.parse(line) as Record<string, unknown>) },
    );
    const log = new Log(logger, 'debug');
    log.write('info', 'POST /payment/request 200 in 12 ms (1 attempt)', { status: 200, attempts: 1 });
    log.write('warn', 'no fields here');
    expect(out).toEqual([
      expect.objectContaining({
        level: 30,
        msg: 'myr-gateway: POST /payment/request 200 in 12 ms (1 attempt)',
        status: 200,
        attempts: 1,
      }),
      expect.objectContaining({ level: 40, msg: 'myr-gateway: no fields here' }),
    ]);
  });

  it.each(LEVELS)('a logger whose %s throws never throws into the SDK', (level) => {
    const logger = {
      ...recordingLogger().logger,
      [level]: () => {
        throw new Error('transport closed');
      },
    };
    const log = new Log(logger, 'debug');
    expect(() => log.write(level, 'line', { a: 1 })).not.toThrow();
    expect(() => log.write(level, 'line')).not.toThrow();
  });

  it('without a logger writes to the console method of the level, prefixed, with the fields', () => {
    const spies = LEVELS.map((m) => vi.spyOn(console, m).mockImplementation(() => undefined));
    try {
      const log = new Log(undefined, 'debug');
      for (const l of LEVELS) log.write(l, `${l} line`, { level: l });
      LEVELS.forEach((l, i) => expect(spies[i]?.mock.calls).toEqual([[`myr-gateway: ${l} line`, { level: l }]]));
    } finally {
      for (const spy of spies) spy.mockRestore();
    }
  });

  it('without a logger or a level, only warnings and errors reach the console', () => {
    const spies = LEVELS.map((m) => vi.spyOn(console, m).mockImplementation(() => undefined));
    try {
      const log = new Log(undefined, undefined);
      for (const l of LEVELS) log.write(l, `${l} line`);
      expect(spies.map((s) => s.mock.calls.length)).toEqual([0, 0, 1, 1]);
    } finally {
      for (const spy of spies) spy.mockRestore();
    }
  });
});

describe('warnOnce', () => {
  it('writes one warning per topic and Log; another topic or another Log warns again', () => {
    const { calls, logger } = recordingLogger();
    const log = new Log(logger, 'warn');
    log.warnOnce('tracer', 'the tracer threw');
    log.warnOnce('tracer', 'the tracer threw');
    log.warnOnce('token-store', 'the token store is slow');
    new Log(logger, 'warn').warnOnce('tracer', 'the tracer threw');
    expect(calls).toEqual([
      { level: 'warn', args: ['myr-gateway: the tracer threw'] },
      { level: 'warn', args: ['myr-gateway: the token store is slow'] },
      { level: 'warn', args: ['myr-gateway: the tracer threw'] },
    ]);
  });

  it("is silent under logLevel 'error' and 'off'", () => {
    const { calls, logger } = recordingLogger();
    new Log(logger, 'error').warnOnce('tracer', 'x');
    new Log(logger, 'off').warnOnce('tracer', 'x');
    expect(calls).toEqual([]);
  });
});

describe('consoleWarn', () => {
  it('prefixes the message with myr-gateway and writes it to console.warn', () => {
    const spy = vi.spyOn(console, 'warn').mockImplementation(() => undefined);
    try {
      consoleWarn('20 MyrGateway clients were created');
      expect(spy.mock.calls).toEqual([['myr-gateway: 20 MyrGateway clients were created']]);
    } finally {
      spy.mockRestore();
    }
  });
});
