/**
 * RedisRateLimiter against a real redis-server, with both clients: one budget for every
 * process sharing it, the learned limit shared too, and Redis down → pacing in process with
 * one warning, bounded by timeoutMs.
 */
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { RateLimitError } from '../../src/index.js';
import { type RedisClientLike, RedisRateLimiter } from '../../src/redis/index.js';
import { CLIENT_KINDS, type ClientKind, connect, rawCommand, RedisServer, whileRedisDown } from '../helpers/redis.js';

let redis: RedisServer;
beforeAll(async () => {
  redis = await RedisServer.start();
});
afterAll(() => redis?.stop());

/** Two limiters on their own connections (two processes of one merchant), on a fresh key prefix. */
async function twoProcesses(
  kind: ClientKind,
  body: (first: RedisRateLimiter, second: RedisRateLimiter, raw: RedisClientLike, keyPrefix: string) => Promise<void>,
): Promise<void> {
  const a = await connect(kind, redis.url);
  const b = await connect(kind, redis.url);
  try {
    const keyPrefix = `t${Date.now()}${Math.random().toString(36).slice(2)}${kind}:`;
    await body(new RedisRateLimiter({ client: a.client, keyPrefix }), new RedisRateLimiter({ client: b.client, keyPrefix }), a.client, keyPrefix);
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

  it('a slot taken by a slow process stays held for its latency, even when a fast process is the one asking next', async () => {
    await twoProcesses(kind, async (fast, slow) => {
      // Both learn limit 1 and a 1 s window; the slow process's answers take 500 ms (the service
      // may count its request that much after the slot was taken), the fast one's 10 ms.
      fast.observe('merchant', 'other', { status: 200, limit: 1, remaining: 0, resetInMs: 990, elapsedMs: 10 });
      slow.observe('merchant', 'other', { status: 200, limit: 1, remaining: 0, resetInMs: 500, elapsedMs: 500 });
      await sleep(1100); // both reported windows have reset
      await slow.acquire('merchant', 'other', { maxWaitMs: 1000 });
      const started = performance.now();
      await fast.acquire('merchant', 'other', { maxWaitMs: 5000 });
      // The slow process's slot: 1 s window + its 500 ms margin, not the fast process's 10 ms.
      expect(performance.now() - started).toBeGreaterThanOrEqual(1400);
    });
  });

  it.each([
    ['a slow answer of a process that never measured the window holds a slot at most half the shared window', { elapsedMs: 8000 }],
    ['a process that learned only the limit does not overwrite the window another process measured', { elapsedMs: 10 }],
  ])('%s', async (_what, other) => {
    await twoProcesses(kind, async (measured, unmeasured) => {
      // One process measures limit 1 and a 1 s window; the other only hears the limit (no
      // X-RateLimit-Remaining or Reset), so it still assumes the published 60 s window.
      measured.observe('merchant', 'other', { status: 200, limit: 1, remaining: 0, resetInMs: 990, elapsedMs: 10 });
      await sleep(50); // the learned window is written in the background
      unmeasured.observe('merchant', 'other', { status: 200, limit: 1, ...other });
      await sleep(1050); // the measured window has reset
      await unmeasured.acquire('merchant', 'other', { maxWaitMs: 1000 });
      const started = performance.now();
      await measured.acquire('merchant', 'other', { maxWaitMs: 5000 });
      // The 1 s window, plus at most half of it: never the 8 s answer, never a 60 s window.
      expect(performance.now() - started).toBeLessThan(1700);
    });
  });

  it('a slot taken before any answer was timed is held past the window too (the first burst may arrive late)', async () => {
    await twoProcesses(kind, async (measured, fresh) => {
      measured.observe('merchant', 'other', { status: 200, limit: 1, remaining: 0, resetInMs: 990, elapsedMs: 10 });
      await sleep(1100); // the learned window is shared, and the reported window has reset
      await fresh.acquire('merchant', 'other', { maxWaitMs: 1000 });
      const started = performance.now();
      await measured.acquire('merchant', 'other', { maxWaitMs: 5000 });
      // The fresh process knows nothing of its latency: its slot is held the 1 s window plus
      // the assumed margin (capped at half the window), not the window alone.
      expect(performance.now() - started).toBeGreaterThanOrEqual(1400);
    });
  });

  it('slots outlive their first window in Redis when the shared window later grows', async () => {
    await twoProcesses(kind, async (limiter, _other, raw, keyPrefix) => {
      limiter.observe('merchant', 'other', { status: 200, limit: 1, remaining: 0, resetInMs: 990, elapsedMs: 10 });
      await sleep(1050); // the reported window has reset
      await limiter.acquire('merchant', 'other', { maxWaitMs: 1000 });
      // Another process measured a 3 s window after a 429: the slot just taken is held 3 s, not 1 s.
      const [cfg] = (await rawCommand(raw, ['KEYS', `${keyPrefix}rate-cfg:*`])) as string[];
      await rawCommand(raw, ['HSET', cfg as string, 'window', '3000']);
      await sleep(1300);
      const started = performance.now();
      await limiter.acquire('merchant', 'other', { maxWaitMs: 5000 });
      expect(performance.now() - started).toBeGreaterThanOrEqual(1400);
    });
  });

  it('Redis down: acquires go ahead on the in-process budget within timeoutMs, with one warning', async () => {
    const warn = vi.spyOn(console, 'warn').mockImplementation(() => undefined);
    try {
      await whileRedisDown(kind, async (client) => {
        const limiter = new RedisRateLimiter({ client, timeoutMs: 100 });
        const started = performance.now();
        for (let i = 0; i < 5; i++) await limiter.acquire('merchant', 'other', { maxWaitMs: 5000 });
        expect(performance.now() - started).toBeLessThan(1000);
        expect(warn.mock.calls.filter(([m]) => String(m).includes('RedisRateLimiter'))).toHaveLength(1);
      });
    } finally {
      warn.mockRestore();
    }
  });
});
