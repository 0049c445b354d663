/**
 * src/core/observe/observer.ts on its own: what one call tells its hooks, its log lines and its
 * span when it succeeds at once, is retried, or fails; which lines each `logLevel` lets through;
 * that a throwing hook, logger or tracer never changes the call; that nothing is paid when
 * nothing listens; and that no api key, token or account number reaches any outlet. Calls are
 * driven by hand through the CallTrace methods, in the order src/core/call/transport.ts calls them,
 * with an injected clock.
 */
import { trace as otelTrace } from '@opentelemetry/api';
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { MyrGatewayError } from '../../../../src/core/errors/base.js';
import { RateLimitError, ServiceUnavailableError, TimeoutError } from '../../../../src/core/errors/service.js';
import type { LogLevel } from '../../../../src/core/observe/log.js';
import {
  Observer,
  type CallShape,
  type CallTrace,
  type ObserveOptions,
} from '../../../../src/core/observe/observer.js';
import type { TracerLike } from '../../../../src/core/observe/trace.js';
import type { RateLimitInfo } from '../../../../src/core/pacing/rate-limit-headers.js';
import { VERSION } from '../../../../src/version.js';
import { expectNoSecret, observeCapture } from '../../../helpers/observe-capture.js';
import { recordingTracer } from '../../../helpers/recording-tracer.js';

const API_KEY = 'sk_live_9f8e7d6c5b4a39281706f5e4d3c2b1a0';
const TOKEN = 'eyJhbGciOiJIUzI1NiJ9.eyJtZXJjaGFudCI6Ik0xIn0.c2lnbmF0dXJlLXNlY3JldA';
const ACCOUNT = '512345678901';

const CREATE: CallShape = {
  method: 'POST',
  path: 'payment/request',
  operation: 'payments.create',
  referenceId: 'ORDER1001',
};
const STATUS: CallShape = { method: 'GET', path: 'payment/status/ORDER1001', operation: 'payments.retrieve' };

const RL_429: RateLimitInfo = { limit: 100, remaining: 0, reset: 1_772_359_260, observedAt: 1_020 };
const RL_OK: RateLimitInfo = { limit: 100, remaining: 99, reset: 1_772_359_320, observedAt: 2_550 };

interface Line {
  level: LogLevel;
  message: string;
  fields: unknown;
}

/** A console/winston-shaped logger that keeps every line. */
function recordingLogger() {
  const lines: Line[] = [];
  const at = (level: LogLevel) => (message: string, fields?: unknown) => void lines.push({ level, message, fields });
  return { lines, logger: { debug: at('debug'), info: at('info'), warn: at('warn'), error: at('error') } };
}

/** A logger whose every method throws, counting the calls. */
function throwingLogger() {
  let calls = 0;
  const boom = () => {
    calls += 1;
    throw new Error('log shipper is down');
  };
  return { calls: () => calls, logger: { debug: boom, info: boom, warn: boom, error: boom } };
}

function recordingHooks() {
  const events: { hook: string; event: unknown }[] = [];
  const hook = (name: string) => (event: unknown) => void events.push({ hook: name, event });
  return { events, hooks: { onRequest: hook('onRequest'), onResponse: hook('onResponse'), onRetry: hook('onRetry') } };
}

function clock(start = 1_000) {
  const c = { t: start, now: () => c.t };
  return c;
}

function observer(options: Omit<ObserveOptions, 'now'>, c = clock()): Observer {
  return new Observer({ tracer: false, ...options, now: c.now }, VERSION);
}

function answer(status: number, headers: Record<string, string> = {}, body = '{}'): Response {
  return new Response(body, { status, headers });
}

type Scenario = 'succeeds' | 'retried' | 'fails';

/**
 * One call as the transport drives it. `succeeds`: a 200 after 12 ms. `retried`: a 429 after
 * 20 ms, a 1500 ms wait, then a 200 after 30 ms. `fails`: a status lookup whose first attempt
 * times out (30 s), waits 500 ms, and whose second is a 503 after 100 ms with no retry left.
 */
async function drive(obs: Observer, c: { t: number }, scenario: Scenario) {
  if (scenario === 'fails') {
    return obs.run(STATUS, async (trace) => {
      trace.request();
      c.t += 30_000;
      trace.response(
        undefined,
        new TimeoutError('The attempt timed out after 30000 ms', { code: 'TIMEOUT', retryable: true }),
        undefined,
      );
      trace.retry(500);
      c.t += 500;
      trace.request();
      c.t += 100;
      const error = new ServiceUnavailableError('No gateway available', {
        code: 'NO_GATEWAY_AVAILABLE',
        status: 503,
        retryable: true,
        correlationId: 'corr-503',
      });
      trace.response(answer(503, { 'x-correlation-id': 'corr-503' }), error, undefined);
      trace.end(error);
      return { thrown: error };
    });
  }
  return obs.run(CREATE, async (trace) => {
    if (scenario === 'retried') {
      trace.request();
      c.t += 20;
      const limited = new RateLimitError('Too many requests', {
        code: 'RATE_LIMITED',
        status: 429,
        retryable: true,
        correlationId: 'corr-429',
        retryAfter: 1.5,
      });
      trace.response(answer(429, { 'x-correlation-id': 'corr-429' }), limited, RL_429);
      trace.retry(1_500);
      c.t += 1_500;
    }
    trace.request();
    const took = scenario === 'retried' ? 30 : 12;
    c.t += took;
    trace.response(answer(200, { 'x-correlation-id': 'corr-ok' }), undefined, RL_OK);
    return trace.succeeded(200);
  });
}

const flushRejections = () => new Promise<void>((resolve) => setImmediate(resolve));

describe('events and log lines of a call', () => {
  // Message shapes are the ones docs/observability.md shows merchants
  // (`POST /payment/request attempt 1: 429 in 12 ms`, `… 200 in 1530 ms (2 attempts)`, `… retrying in 1500 ms`).
  it('a call that succeeds at once: onRequest and onResponse once, two debug lines and one info line', async () => {
    const c = clock();
    const { lines, logger } = recordingLogger();
    const { events, hooks } = recordingHooks();
    const info = await drive(observer({ logger, logLevel: 'debug', ...hooks }, c), c, 'succeeds');

    const request = { method: 'POST', path: '/payment/request', referenceId: 'ORDER1001', attempt: 1 };
    const response = {
      ...request,
      status: 200,
      durationMs: 12,
      correlationId: 'corr-ok',
      rateLimit: RL_OK,
      errorCode: undefined,
    };
    expect(events).toEqual([
      { hook: 'onRequest', event: request },
      { hook: 'onResponse', event: response },
    ]);
    expect(lines).toEqual([
      { level: 'debug', message: 'myr-gateway: POST /payment/request attempt 1', fields: request },
      { level: 'debug', message: 'myr-gateway: POST /payment/request attempt 1: 200 in 12 ms', fields: response },
      {
        level: 'info',
        message: 'myr-gateway: POST /payment/request 200 in 12 ms (1 attempt)',
        fields: {
          method: 'POST',
          path: '/payment/request',
          referenceId: 'ORDER1001',
          attempts: 1,
          status: 200,
          durationMs: 12,
          correlationId: 'corr-ok',
          rateLimit: RL_OK,
          errorCode: undefined,
        },
      },
    ]);
    expect(info).toEqual({ status: 200, correlationId: 'corr-ok', rateLimit: RL_OK, attempts: 1, durationMs: 12 });
  });

  it('a retried call: onRetry carries the failed attempt and the wait; the info lines are the retry and the outcome', async () => {
    const c = clock();
    const { lines, logger } = recordingLogger();
    const { events, hooks } = recordingHooks();
    const info = await drive(observer({ logger, logLevel: 'debug', ...hooks }, c), c, 'retried');

    const base = { method: 'POST', path: '/payment/request', referenceId: 'ORDER1001' };
    const failed = {
      ...base,
      attempt: 1,
      status: 429,
      durationMs: 20,
      correlationId: 'corr-429',
      rateLimit: RL_429,
      errorCode: 'RATE_LIMITED',
    };
    expect(events).toEqual([
      { hook: 'onRequest', event: { ...base, attempt: 1 } },
      { hook: 'onResponse', event: failed },
      { hook: 'onRetry', event: { ...failed, delayMs: 1_500 } },
      { hook: 'onRequest', event: { ...base, attempt: 2 } },
      // durationMs of an attempt is its own, not the call's: the wait before it is not counted.
      {
        hook: 'onResponse',
        event: {
          ...base,
          attempt: 2,
          status: 200,
          durationMs: 30,
          correlationId: 'corr-ok',
          rateLimit: RL_OK,
          errorCode: undefined,
        },
      },
    ]);
    expect(lines.map((l) => [l.level, l.message])).toEqual([
      ['debug', 'myr-gateway: POST /payment/request attempt 1'],
      ['debug', 'myr-gateway: POST /payment/request attempt 1: 429 in 20 ms'],
      ['info', 'myr-gateway: POST /payment/request attempt 1 failed with RATE_LIMITED; retrying in 1500 ms'],
      ['debug', 'myr-gateway: POST /payment/request attempt 2'],
      ['debug', 'myr-gateway: POST /payment/request attempt 2: 200 in 30 ms'],
      ['info', 'myr-gateway: POST /payment/request 200 in 1550 ms (2 attempts)'],
    ]);
    expect(lines[2]?.fields).toEqual({ ...failed, delayMs: 1_500 });
    // lastResponse: the answer the result came from, and the whole call's duration, waits included.
    expect(info).toEqual({ status: 200, correlationId: 'corr-ok', rateLimit: RL_OK, attempts: 2, durationMs: 1_550 });
  });

  it('a call that fails: an attempt without an answer has no status and says why; the outcome line names the error code', async () => {
    const c = clock();
    const { lines, logger } = recordingLogger();
    const { events, hooks } = recordingHooks();
    await drive(observer({ logger, logLevel: 'debug', ...hooks }, c), c, 'fails');

    const base = { method: 'GET', path: '/payment/status/ORDER1001', referenceId: undefined };
    const timedOut = {
      ...base,
      attempt: 1,
      status: undefined,
      durationMs: 30_000,
      correlationId: undefined,
      rateLimit: undefined,
      errorCode: 'TIMEOUT',
    };
    expect(events).toEqual([
      { hook: 'onRequest', event: { ...base, attempt: 1 } },
      { hook: 'onResponse', event: timedOut },
      { hook: 'onRetry', event: { ...timedOut, delayMs: 500 } },
      { hook: 'onRequest', event: { ...base, attempt: 2 } },
      {
        hook: 'onResponse',
        event: {
          ...base,
          attempt: 2,
          status: 503,
          durationMs: 100,
          correlationId: 'corr-503',
          rateLimit: undefined,
          errorCode: 'NO_GATEWAY_AVAILABLE',
        },
      },
    ]);
    expect(lines.map((l) => [l.level, l.message])).toEqual([
      ['debug', 'myr-gateway: GET /payment/status/ORDER1001 attempt 1'],
      ['debug', 'myr-gateway: GET /payment/status/ORDER1001 attempt 1: TIMEOUT in 30000 ms'],
      ['info', 'myr-gateway: GET /payment/status/ORDER1001 attempt 1 failed with TIMEOUT; retrying in 500 ms'],
      ['debug', 'myr-gateway: GET /payment/status/ORDER1001 attempt 2'],
      ['debug', 'myr-gateway: GET /payment/status/ORDER1001 attempt 2: 503 in 100 ms'],
      ['info', 'myr-gateway: GET /payment/status/ORDER1001 failed with NO_GATEWAY_AVAILABLE in 30600 ms (2 attempts)'],
    ]);
    expect(lines[5]?.fields).toMatchObject({
      attempts: 2,
      status: 503,
      correlationId: 'corr-503',
      errorCode: 'NO_GATEWAY_AVAILABLE',
      durationMs: 30_600,
    });
  });

  it('a call that ends with something other than a MyrGatewayError is logged as UNKNOWN, without its message', async () => {
    const { lines, logger } = recordingLogger();
    const obs = observer({ logger, logLevel: 'info' });
    await obs.run(CREATE, async (trace) => {
      trace.request();
      trace.end(new TypeError(`fetch failed: Authorization Bearer ${TOKEN}`));
    });
    expect(lines.map((l) => l.message)).toEqual([
      'myr-gateway: POST /payment/request failed with UNKNOWN in 0 ms (1 attempt)',
    ]);
    expect(lines[0]?.fields).toMatchObject({ errorCode: 'UNKNOWN', attempts: 1 });
    expectNoSecret(JSON.stringify(lines), { TOKEN });
  });

  it.each([
    ['x-correlation-id', { 'x-correlation-id': 'c-1' }, undefined, 'c-1'],
    ['x-request-id when there is no x-correlation-id', { 'x-request-id': 'r-1' }, undefined, 'r-1'],
    ['x-correlation-id over x-request-id', { 'x-correlation-id': 'c-1', 'x-request-id': 'r-1' }, undefined, 'c-1'],
    [
      "the error's own correlation id (read from the error body) over the header",
      { 'x-correlation-id': 'c-1' },
      'body-1',
      'body-1',
    ],
    ['nothing when neither says one', {}, undefined, undefined],
  ])('the correlation id of an attempt is %s', async (_what, headers: Record<string, string>, fromError, expected) => {
    const { events, hooks } = recordingHooks();
    await observer(hooks).run(CREATE, async (trace) => {
      trace.request();
      const error = new MyrGatewayError('Bad request', {
        code: 'VALIDATION_ERROR',
        status: 400,
        correlationId: fromError,
      });
      trace.response(answer(400, headers), error, undefined);
      trace.end(error);
    });
    expect(events[1]?.event).toMatchObject({ correlationId: expected });
  });
});

describe('log levels', () => {
  // docs/observability.md: debug = every attempt, info = every call and retry, warn = the SDK's own
  // warnings; the default with a logger is 'warn'.
  it.each([
    ['debug', ['debug', 'debug', 'info', 'debug', 'debug', 'info']],
    ['info', ['info', 'info']],
    ['warn', []],
    ['error', []],
    ['off', []],
    [undefined, []],
  ] as const)('logLevel %s lets through a retried call’s lines of levels %j', async (level, expected) => {
    const c = clock();
    const { lines, logger } = recordingLogger();
    await drive(observer({ logger, logLevel: level }, c), c, 'retried');
    expect(lines.map((l) => l.level)).toEqual(expected);
  });

  it.each([
    ['debug', 1],
    ['info', 1],
    ['warn', 1],
    ['error', 0],
    ['off', 0],
  ] as const)('logLevel %s: a hook that threw is told in %i warn line(s)', async (level, count) => {
    const c = clock();
    const { lines, logger } = recordingLogger();
    await drive(
      observer(
        {
          logger,
          logLevel: level,
          onResponse: () => {
            throw new Error('metrics down');
          },
        },
        c,
      ),
      c,
      'succeeds',
    );
    expect(lines.filter((l) => l.level === 'warn').map((l) => l.message)).toEqual(
      Array(count).fill('myr-gateway: the onResponse hook threw; ignoring it'),
    );
  });

  it('a logLevel without a logger writes to the console, at the matching console method', async () => {
    const c = clock();
    const spies = (['debug', 'info', 'warn', 'error'] as const).map((m) =>
      vi.spyOn(console, m).mockImplementation(() => undefined),
    );
    try {
      await drive(observer({ logLevel: 'info' }, c), c, 'retried');
      const [debug, info, warn, error] = spies;
      expect(debug?.mock.calls).toEqual([]);
      expect(info?.mock.calls.map((call) => call[0])).toEqual([
        'myr-gateway: POST /payment/request attempt 1 failed with RATE_LIMITED; retrying in 1500 ms',
        'myr-gateway: POST /payment/request 200 in 1550 ms (2 attempts)',
      ]);
      expect(warn?.mock.calls).toEqual([]);
      expect(error?.mock.calls).toEqual([]);
    } finally {
      for (const spy of spies) spy.mockRestore();
    }
  });
});

describe('nothing listening', () => {
  const OTEL_API = Symbol.for('opentelemetry.js.api.1');
  const registry = globalThis as unknown as Record<symbol, unknown>;
  afterEach(() => {
    delete registry[OTEL_API];
  });

  it('without logger, hooks or tracer a call writes nowhere, runs untraced, and still returns its lastResponse', async () => {
    const c = clock();
    const spies = (['log', 'debug', 'info', 'warn', 'error'] as const).map((m) =>
      vi.spyOn(console, m).mockImplementation(() => undefined),
    );
    try {
      const obs = new Observer({ now: c.now }, VERSION);
      expect(obs.traced()).toBe(false);
      const info = await obs.run(CREATE, async (trace: CallTrace) => {
        trace.request();
        c.t += 5;
        trace.response(answer(200, { 'x-request-id': 'r-9' }), undefined, undefined);
        return trace.succeeded(200);
      });
      expect(info).toEqual({ status: 200, correlationId: 'r-9', rateLimit: undefined, attempts: 1, durationMs: 5 });
      for (const spy of spies) expect(spy).not.toHaveBeenCalled();
    } finally {
      for (const spy of spies) spy.mockRestore();
    }
  });

  it('tracer: false ignores a globally registered provider, which is never asked for a tracer', async () => {
    const getTracer = vi.fn(() => recordingTracer().tracer);
    registry[OTEL_API] = { trace: { getTracer } };
    const obs = observer({ tracer: false });
    expect(obs.traced()).toBe(false);
    await obs.run(CREATE, async (trace) => trace.end(new Error('x')));
    expect(getTracer).not.toHaveBeenCalled();
  });

  it.each([
    ['no registry entry', undefined],
    ['an entry without trace', { version: '1.9.1' }],
    ['a trace whose getTracer is not a function', { trace: { getTracer: 'nope' } }],
  ])('with %s, calls run untraced', (_what, entry) => {
    if (entry !== undefined) registry[OTEL_API] = entry;
    expect(new Observer({ now: () => 0 }, VERSION).traced()).toBe(false);
  });

  it('a registered provider is asked once for the myr-gateway tracer, and again only when the provider changes', async () => {
    const first = recordingTracer();
    const getTracer = vi.fn(() => first.tracer);
    registry[OTEL_API] = { trace: { getTracer } };
    const obs = new Observer({ now: () => 0 }, VERSION);
    expect(obs.traced()).toBe(true);
    await obs.run(CREATE, async (trace) => trace.end(new Error('x')));
    await obs.run(STATUS, async (trace) => trace.end(new Error('x')));
    expect(getTracer.mock.calls).toEqual([['myr-gateway', VERSION]]);
    expect(first.spans.map((s) => s.name)).toEqual([
      'myr-gateway POST /payment/request',
      'myr-gateway GET /payment/status/{identifier}',
    ]);

    const second = recordingTracer();
    registry[OTEL_API] = { trace: { getTracer: () => second.tracer } };
    await obs.run(CREATE, async (trace) => trace.end(new Error('x')));
    expect(second.spans).toHaveLength(1);
    expect(first.spans).toHaveLength(2);
  });

  it('finds a provider registered through the real @opentelemetry/api', async () => {
    const exporter = new InMemorySpanExporter();
    const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
    expect(otelTrace.setGlobalTracerProvider(provider)).toBe(true);
    try {
      const c = clock();
      await drive(new Observer({ now: c.now }, VERSION), c, 'succeeds');
      const spans = exporter.getFinishedSpans();
      expect(spans.map((s) => [s.name, s.instrumentationScope.name, s.instrumentationScope.version])).toEqual([
        ['myr-gateway POST /payment/request', 'myr-gateway', VERSION],
      ]);
    } finally {
      otelTrace.disable();
    }
  });
});

describe('hooks and loggers that throw', () => {
  const HOOKS = ['onRequest', 'onResponse', 'onRetry'] as const;

  it.each(
    HOOKS.flatMap(
      (hook) =>
        [
          [
            hook,
            'throws',
            () => {
              throw new Error(`the ${hook} hook broke: ${API_KEY}`);
            },
          ],
          [
            hook,
            'returns a promise that rejects',
            () => Promise.reject(new Error(`the ${hook} hook broke: ${API_KEY}`)),
          ],
        ] as const,
    ),
  )('%s that %s: the call goes on unchanged, with one warn line and no error text', async (hook, _how, broken) => {
    const quiet = clock();
    const plain = await drive(observer({}, quiet), quiet, 'retried');
    const c = clock();
    const { lines, logger } = recordingLogger();
    const info = await drive(observer({ logger, [hook]: broken }, c), c, 'retried');
    await flushRejections();
    expect(info).toEqual(plain);
    // onRetry is called once in this call, onRequest and onResponse twice.
    const times = hook === 'onRetry' ? 1 : 2;
    expect(lines).toEqual(
      Array(times).fill({
        level: 'warn',
        message: `myr-gateway: the ${hook} hook threw; ignoring it`,
        fields: undefined,
      }),
    );
    expectNoSecret(JSON.stringify(lines), { API_KEY });
  });

  it('without a logger, a hook that threw is told on console.warn', async () => {
    const spy = vi.spyOn(console, 'warn').mockImplementation(() => undefined);
    try {
      const c = clock();
      await drive(
        observer(
          {
            onRequest: () => {
              throw new Error('boom');
            },
          },
          c,
        ),
        c,
        'succeeds',
      );
      expect(spy.mock.calls).toEqual([['myr-gateway: the onRequest hook threw; ignoring it']]);
    } finally {
      spy.mockRestore();
    }
  });

  it('hooks returning values or promises that resolve are not warned about', async () => {
    const c = clock();
    const { lines, logger } = recordingLogger();
    await drive(
      observer(
        { logger, onRequest: () => 42, onResponse: () => Promise.resolve('ok'), onRetry: () => ({ then: undefined }) },
        c,
      ),
      c,
      'retried',
    );
    await flushRejections();
    expect(lines).toEqual([]);
  });

  it('a logger whose every method throws never fails the call, and the hooks still hear every event', async () => {
    const c = clock();
    const broken = throwingLogger();
    const { events, hooks } = recordingHooks();
    const info = await drive(
      observer(
        {
          logger: broken.logger,
          logLevel: 'debug',
          ...hooks,
          onRetry: () => {
            throw new Error('also broken');
          },
        },
        c,
      ),
      c,
      'retried',
    );
    expect(info).toMatchObject({ status: 200, attempts: 2, durationMs: 1_550 });
    expect(events.map((e) => e.hook)).toEqual(['onRequest', 'onResponse', 'onRequest', 'onResponse']);
    // 4 debug lines, 2 info lines and the warning about onRetry were all tried.
    expect(broken.calls()).toBe(7);
  });

  it('a tracer that throws leaves the call to run once, untraced, and is warned about once per client', async () => {
    const { lines, logger } = recordingLogger();
    let runs = 0;
    const tracer: TracerLike = {
      startActiveSpan: () => {
        throw new Error('exporter misconfigured');
      },
    };
    const obs = observer({ logger, tracer });
    for (let i = 0; i < 2; i++) {
      const result = await obs.run(CREATE, async (trace) => {
        runs += 1;
        trace.request();
        trace.response(answer(200), undefined, undefined);
        return trace.succeeded(200);
      });
      expect(result).toMatchObject({ status: 200, attempts: 1 });
    }
    expect(runs).toBe(2);
    expect(lines.map((l) => [l.level, l.message])).toEqual([
      ['warn', 'myr-gateway: the OpenTelemetry tracer threw; the call went on, its span may be incomplete'],
    ]);
  });

  it('span methods that throw do not change the outcome of a retried call', async () => {
    const c = clock();
    const { tracer, spans } = recordingTracer({ broken: true });
    const { lines, logger } = recordingLogger();
    const info = await drive(observer({ logger, tracer }, c), c, 'retried');
    expect(info).toEqual({ status: 200, correlationId: 'corr-ok', rateLimit: RL_OK, attempts: 2, durationMs: 1_550 });
    expect(lines).toHaveLength(1);
    expect(spans[0]?.ended).toBe(1);
  });
});

describe('spans', () => {
  it('a call that succeeds: a client span named by method and route, with its outcome attributes and no error status', async () => {
    const c = clock();
    const { tracer, spans } = recordingTracer();
    const obs = observer({ tracer }, c);
    expect(obs.traced()).toBe(true);
    await drive(obs, c, 'succeeds');
    expect(spans).toEqual([
      {
        name: 'myr-gateway POST /payment/request',
        options: {
          kind: 2, // SpanKind.CLIENT
          attributes: {
            'http.request.method': 'POST',
            'url.template': '/payment/request',
            'myr.operation': 'payments.create',
            'myr.reference_id': 'ORDER1001',
          },
        },
        attributes: {
          'myr.attempts': 1,
          'http.response.status_code': 200,
          'myr.correlation_id': 'corr-ok',
          'myr.rate_limit.limit': 100,
          'myr.rate_limit.remaining': 99,
          'myr.rate_limit.reset': 1_772_359_320,
        },
        events: [],
        statuses: [],
        ended: 1,
      },
    ]);
  });

  it('a retried call: one span, a myr.retry event per retry, the last answer’s attributes', async () => {
    const c = clock();
    const { tracer, spans } = recordingTracer();
    await drive(observer({ tracer }, c), c, 'retried');
    expect(spans).toHaveLength(1);
    expect(spans[0]?.events).toEqual([
      {
        name: 'myr.retry',
        attributes: {
          'myr.attempt': 1,
          'myr.retry.delay_ms': 1_500,
          'error.type': 'RATE_LIMITED',
          'http.response.status_code': 429,
        },
      },
    ]);
    expect(spans[0]?.attributes).toMatchObject({
      'myr.attempts': 2,
      'http.response.status_code': 200,
      'myr.correlation_id': 'corr-ok',
    });
    expect(spans[0]?.attributes).not.toHaveProperty('error.type');
    expect(spans[0]?.statuses).toEqual([]);
    expect(spans[0]?.ended).toBe(1);
  });

  it('a failed status lookup: the identifier is templated out of the name, error.type and an error status are set', async () => {
    const c = clock();
    const { tracer, spans } = recordingTracer();
    await drive(observer({ tracer }, c), c, 'fails');
    const [span] = spans;
    expect(span?.name).toBe('myr-gateway GET /payment/status/{identifier}');
    // No reference id: the key is absent, not set to undefined.
    expect(span?.options).toEqual({
      kind: 2,
      attributes: {
        'http.request.method': 'GET',
        'url.template': '/payment/status/{identifier}',
        'myr.operation': 'payments.retrieve',
      },
    });
    expect(span?.attributes).toEqual({
      'myr.attempts': 2,
      'http.response.status_code': 503,
      'myr.correlation_id': 'corr-503',
      'error.type': 'NO_GATEWAY_AVAILABLE',
    });
    expect(span?.statuses).toEqual([{ code: 2, message: 'NO_GATEWAY_AVAILABLE' }]);
    expect(
      span?.events.map((e) => [e.name, e.attributes?.['error.type'], e.attributes?.['myr.retry.delay_ms']]),
    ).toEqual([['myr.retry', 'TIMEOUT', 500]]);
    // A timeout had no answer: the event has no status key at all (OpenTelemetry keeps an undefined one).
    expect(Object.keys(span?.events[0]?.attributes ?? {})).not.toContain('http.response.status_code');
    expect(span?.ended).toBe(1);
  });

  it('a call ending in an error that is not the SDK’s gets error.type UNKNOWN, never the error’s message', async () => {
    const { tracer, spans } = recordingTracer();
    await observer({ tracer }).run(CREATE, async (trace) => {
      trace.request();
      trace.end(new Error(`socket hang up while sending api_key=${API_KEY}`));
    });
    expect(spans[0]?.attributes['error.type']).toBe('UNKNOWN');
    expect(spans[0]?.statuses).toEqual([{ code: 2, message: 'UNKNOWN' }]);
    expectNoSecret(JSON.stringify(spans), { API_KEY });
  });
});

describe('secrets', () => {
  it('no api key, token or account number reaches a hook, a log line, a span or the console, whatever errors and answers carry', async () => {
    const capture = observeCapture();
    try {
      const c = clock();
      const obs = new Observer({ ...capture.options, now: c.now }, VERSION);
      const withdrawal: CallShape = {
        method: 'POST',
        path: 'withdrawal/request',
        operation: 'withdrawals.create',
        referenceId: 'WD1001',
      };
      const headers = {
        authorization: `Bearer ${TOKEN}`,
        'set-cookie': `session=${TOKEN}`,
        'x-echo-api-key': API_KEY,
        'x-correlation-id': 'corr-wd',
      };
      const body = JSON.stringify({ api_key: API_KEY, access_token: TOKEN, account_number: ACCOUNT });
      await obs.run(withdrawal, async (trace) => {
        trace.request();
        c.t += 10;
        const limited = new RateLimitError(`Too many requests for ${API_KEY}`, {
          code: 'RATE_LIMITED',
          status: 429,
          correlationId: 'corr-wd',
          cause: new Error(`Bearer ${TOKEN}`),
        });
        trace.response(answer(429, headers, body), limited, RL_429);
        trace.retry(1_000);
        trace.request();
        const failure = new MyrGatewayError(`Account ${ACCOUNT} rejected (token ${TOKEN})`, {
          code: 'INVALID_BANK_CODE',
          status: 400,
          referenceId: 'WD1001',
        });
        trace.response(answer(400, headers, body), failure, undefined);
        trace.end(failure);
      });
      await drive(obs, c, 'succeeds');
      await capture.flush();
      const dump = capture.dump();
      // The capture saw the call (so the check below is not vacuous)...
      expect(capture.hooks.map((h) => h.hook)).toEqual([
        'onRequest',
        'onResponse',
        'onRetry',
        'onRequest',
        'onResponse',
        'onRequest',
        'onResponse',
      ]);
      expect(capture.spans()).toHaveLength(2);
      for (const fact of ['WD1001', 'corr-wd', 'INVALID_BANK_CODE', 'RATE_LIMITED', '/withdrawal/request'])
        expect(dump).toContain(fact);
      // ...and none of what the service or the errors carried besides those facts.
      expectNoSecret(dump, { API_KEY, TOKEN, ACCOUNT });
    } finally {
      capture.restore();
    }
  });
});
