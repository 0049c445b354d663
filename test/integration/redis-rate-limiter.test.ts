/**
 * RedisRateLimiter against a real redis-server, with both clients: one budget for every
 * process sharing it, the learned limit shared too, and Redis down → pacing in process with
 * one warning, bounded by timeoutMs.
 */
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { type Logger, RateLimitError } from '../../src/index.js';
import { type RedisClientLike, RedisRateLimiter } from '../../src/redis/index.js';
import { CLIENT_KINDS, type ClientKind, connect, rawCommand, RedisServer, whileRedisDown } from '../helpers/redis.js';

let redis: RedisServer;
beforeAll(async () => {
  redis = await RedisServer.start();
});
afterAll(() => redis?.stop());

/**
 * Two limiters on their own connections (two processes of one merchant), on a fresh key prefix.
 * `first` may wrap the first process's connection and set its options.
 */
async function twoProcesses(
  kind: ClientKind,
  body: (first: RedisRateLimiter, second: RedisRateLimiter, raw: RedisClientLike, keyPrefix: string) => Promise<void>,
  first: { wrap?: (client: RedisClientLike) => RedisClientLike; timeoutMs?: number; logger?: Logger } = {},
): Promise<void> {
  const a = await connect(kind, redis.url);
  const b = await connect(kind, redis.url);
  try {
    const keyPrefix = `t${Date.now()}${Math.random().toString(36).slice(2)}${kind}:`;
    const client = first.wrap ? first.wrap(a.client) : a.client;
    await body(
      new RedisRateLimiter({ client, keyPrefix, timeoutMs: first.timeoutMs, logger: first.logger }),
      new RedisRateLimiter({ client: b.client, keyPrefix, logger: first.logger }),
      a.client,
      keyPrefix,
    );
  } finally {
    await a.close();
    await b.close();
  }
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe.each(CLIENT_KINDS)('RedisRateLimiter on %s', (kind) => {
  it('two limiters (two processes) share one budget, and the limit one of them learned', async () => {
    await twoProcesses(kind, async (first, second) => {
      await first.acquire('merchant', 'withdraw', { maxWaitMs: 1000 });
      // The service answered: limit 2, this request alone in a 60 s window.
      first.observe('merchant', 'withdraw', { status: 200, limit: 2, remaining: 1, resetInMs: 59_990, elapsedMs: 10 });
      await sleep(50); // the learned limit is written in the background
      await second.acquire('merchant', 'withdraw', { maxWaitMs: 1000 });
      const refused = await second.acquire('merchant', 'withdraw', { maxWaitMs: 30 }).catch((e: unknown) => e);
      expect(refused).toBeInstanceOf(RateLimitError);
      expect((refused as RateLimitError).message).toContain("client's own pacing");
      // Another merchant's budget is untouched.
      await second.acquire('other-merchant', 'withdraw', { maxWaitMs: 1000 });
    });
  });

  // Each process learns limit 1 and a 1 s window from an earlier answer, then waits it out.
  const learnOneSlotPerSecond = async (...limiters: RedisRateLimiter[]) => {
    for (const l of limiters)
      l.observe('merchant', 'other', { status: 200, limit: 1, remaining: 0, resetInMs: 990, elapsedMs: 10 });
    await sleep(1100);
  };

  it('a slot is held for the window after its answer, however late the answer came', async () => {
    await twoProcesses(kind, async (slow, other) => {
      await learnOneSlotPerSecond(slow, other);
      const slot = await slow.acquire('merchant', 'other', { maxWaitMs: 5000 });
      const started = performance.now();
      const granted = other.acquire('merchant', 'other', { maxWaitMs: 5000 }).then(() => performance.now() - started);
      // The loaded process's answer comes 800 ms after its slot: the service may have counted
      // the request at any time until then, so the slot counts until 800 ms + the 1 s window.
      await sleep(800);
      slow.observe('merchant', 'other', { status: 200, elapsedMs: 800 }, slot as string);
      const waited = await granted;
      expect(waited).toBeGreaterThanOrEqual(1750);
      expect(waited).toBeLessThan(2700);
    });
  });

  it("a slot whose answer never comes is held for its call's time left plus the window", async () => {
    await twoProcesses(kind, async (crashed, other) => {
      await learnOneSlotPerSecond(crashed, other);
      // A process that took a slot with 1 s left of its call and never reported an answer.
      await crashed.acquire('merchant', 'other', { maxWaitMs: 1000 });
      const started = performance.now();
      await other.acquire('merchant', 'other', { maxWaitMs: 5000 });
      const waited = performance.now() - started;
      expect(waited).toBeGreaterThanOrEqual(1900);
      expect(waited).toBeLessThan(3000);
    });
  });

  it('a process that learned only the limit does not overwrite the window another process measured', async () => {
    await twoProcesses(kind, async (measured, unmeasured) => {
      // One process measures limit 1 and a 1 s window; the other only hears the limit (no
      // X-RateLimit-Remaining or Reset), so it still assumes the published 60 s window.
      measured.observe('merchant', 'other', {
        status: 200,
        limit: 1,
        remaining: 0,
        resetInMs: 1090,
        resetAt: Date.now() + 1090,
        elapsedMs: 10,
      });
      await sleep(50); // the learned window is written in the background
      unmeasured.observe('merchant', 'other', { status: 200, limit: 1, elapsedMs: 10 });
      await sleep(1200); // the measured window has reset
      const slot = await unmeasured.acquire('merchant', 'other', { maxWaitMs: 1000 });
      unmeasured.observe('merchant', 'other', { status: 200, elapsedMs: 5 }, slot as string);
      const started = performance.now();
      await measured.acquire('merchant', 'other', { maxWaitMs: 5000 });
      // The 1 s window after the answer: never a 60 s one.
      expect(performance.now() - started).toBeLessThan(1700);
    });
  });

  it('slots outlive their first window in Redis when the shared window later grows', async () => {
    await twoProcesses(kind, async (limiter, _other, raw, keyPrefix) => {
      await learnOneSlotPerSecond(limiter);
      const slot = await limiter.acquire('merchant', 'other', { maxWaitMs: 1000 });
      limiter.observe('merchant', 'other', { status: 200, elapsedMs: 5 }, slot as string);
      // Another process measured a 3 s window after a 429: the slot just answered counts 3 s, not 1 s.
      const [cfg] = (await rawCommand(raw, ['KEYS', `${keyPrefix}rate-cfg:*`])) as string[];
      await rawCommand(raw, ['HSET', cfg as string, 'window', '3000']);
      await sleep(1300);
      const started = performance.now();
      await limiter.acquire('merchant', 'other', { maxWaitMs: 5000 });
      expect(performance.now() - started).toBeGreaterThanOrEqual(1400);
    });
  });

  it('a slot Redis grants after the acquire timed out is given back, and a fallback answer never marks a Redis slot', async () => {
    // The first process's connection delivers its next rate-limit script 300 ms late (an offline
    // queue, a stall), keeping the order of commands as real clients do.
    let delayNext = false;
    let queue: Promise<unknown> = Promise.resolve();
    const late = (client: RedisClientLike): RedisClientLike => ({
      sendCommand: (args: string[]) => {
        const run = queue.then(async () => {
          if (delayNext && args[0]?.startsWith('EVAL') && args.some((x) => x.includes('rate:{'))) {
            delayNext = false;
            await sleep(300);
          }
          return rawCommand(client, args);
        });
        queue = run.catch(() => undefined);
        return run;
      },
    });
    const warn = vi.spyOn(console, 'warn').mockImplementation(() => undefined);
    try {
      await twoProcesses(
        kind,
        async (p1, p2) => {
          await learnOneSlotPerSecond(p1, p2);
          delayNext = true;
          const fallback = await p1.acquire('merchant', 'other', { maxWaitMs: 120_000 }); // in process: no name
          expect(fallback).toBeUndefined();
          await sleep(400); // the late script took a slot in Redis; the limiter removed it after
          const other = await p2.acquire('merchant', 'other', { maxWaitMs: 1000 });
          p2.observe('merchant', 'other', { status: 200, elapsedMs: 5 }, other as string);
          await sleep(5000); // p1 tries Redis again
          const shared = await p1.acquire('merchant', 'other', { maxWaitMs: 5000 });
          expect(shared).toEqual(expect.any(String));
          // The fallback request's answer comes now: it must not mark the Redis slot as answered.
          p1.observe('merchant', 'other', { status: 200, elapsedMs: 5000 }, fallback as undefined);
          const started = performance.now();
          const granted = p2.acquire('merchant', 'other', { maxWaitMs: 5000 }).then(() => performance.now() - started);
          await sleep(800);
          p1.observe('merchant', 'other', { status: 200, elapsedMs: 800 }, shared as string);
          expect(await granted).toBeGreaterThanOrEqual(1750);
        },
        { wrap: late, timeoutMs: 100 },
      );
    } finally {
      warn.mockRestore();
    }
  }, 20_000);

  // Shared state is input: anyone with access to Redis (or a bug) can write the hash.
  it.each([
    ['limit 0', { limit: '0' }],
    ['limit -5', { limit: '-5' }],
    ['limit "abc"', { limit: 'abc' }],
    ['a window of a day (outside 1 s – 1 h)', { window: '86400000' }],
  ])(
    'a rate-cfg edited to %s is ignored, with a warning: acquires still go ahead on what the process knows',
    async (_what, fields) => {
      const warnings: string[] = [];
      const logger = {
        debug: () => undefined,
        info: () => undefined,
        warn: (m: string) => void warnings.push(m),
        error: () => undefined,
      };
      await twoProcesses(
        kind,
        async (writer, limiter, raw, keyPrefix) => {
          writer.observe('merchant', 'other', {
            status: 200,
            limit: 2,
            remaining: 1,
            resetInMs: 1500,
            resetAt: Date.now() + 1500,
            elapsedMs: 10,
          });
          limiter.observe('merchant', 'other', {
            status: 200,
            limit: 2,
            remaining: 1,
            resetInMs: 1500,
            resetAt: Date.now() + 1500,
            elapsedMs: 10,
          });
          await sleep(100); // the learned limit and window are written in the background
          const [cfg] = (await rawCommand(raw, ['KEYS', `${keyPrefix}rate-cfg:*`])) as string[];
          // The edge probe spent (`done`): its one early request would be the third here, and this is
          // about the limit and the window (the probe: redis-rate-edge-probe.test.ts).
          await rawCommand(raw, ['HSET', cfg as string, ...Object.entries(fields).flat(), 'edge', 'done']);
          const started = performance.now();
          const granted: number[] = [];
          for (let i = 0; i < 4; i++) {
            const slot = await limiter.acquire('merchant', 'other', { maxWaitMs: 5000 });
            granted.push(performance.now() - started);
            limiter.observe('merchant', 'other', { status: 200, elapsedMs: 5 }, slot as string);
          }
          // 4 at 2 per 1.5 s window: the second pair a window after the first (neither stalled nor a burst).
          expect(granted[2]).toBeGreaterThan(1000);
          expect(granted[3]).toBeLessThan(4000);
        },
        { logger },
      );
      expect(warnings).toEqual([expect.stringContaining('found a limit or window in Redis out of range')]);
    },
    10_000,
  );

  it("Redis down: acquires go ahead on the in-process budget within timeoutMs, with one warning through the limiter's logger", async () => {
    const onConsole = vi.spyOn(console, 'warn').mockImplementation(() => undefined);
    const warnings: string[] = [];
    const logger = {
      debug: () => undefined,
      info: () => undefined,
      warn: (m: string) => void warnings.push(m),
      error: () => undefined,
    };
    try {
      await whileRedisDown(kind, async (client) => {
        const limiter = new RedisRateLimiter({ client, timeoutMs: 100, logger });
        const started = performance.now();
        for (let i = 0; i < 5; i++) {
          const slot = await limiter.acquire('merchant', 'other', { maxWaitMs: 5000 });
          // The answers the client reports (the in-process fallback starts slow too: one probe first).
          limiter.observe(
            'merchant',
            'other',
            { status: 200, limit: 100, remaining: 99 - i, resetInMs: 60_000, elapsedMs: 5 },
            slot ?? undefined,
          );
        }
        expect(performance.now() - started).toBeLessThan(1000);
        expect(warnings.filter((m) => m.includes('RedisRateLimiter'))).toHaveLength(1);
        expect(onConsole).not.toHaveBeenCalled();
      });
    } finally {
      onConsole.mockRestore();
    }
  });
});
