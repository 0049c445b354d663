/** The in-process limiter's rules (src/core/pacing/limiter.ts, memory-limiter.ts) on a fake clock. */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { MemoryRateLimiter, RateLimitError } from '../../../../src/index.js';

beforeEach(() => vi.useFakeTimers());
afterEach(() => vi.useRealTimers());

const K = 'merchant';
const wait = { maxWaitMs: 120_000 };
function limiter() {
  return new MemoryRateLimiter({ now: () => Date.now() });
}
/** Resolves to the fake time at which each acquire was granted. */
function grants(l: MemoryRateLimiter, n: number, bucket: 'withdraw' | 'other' = 'withdraw') {
  const start = Date.now();
  return Array.from({ length: n }, () => l.acquire(K, bucket, wait).then(() => Date.now() - start));
}

describe('MemoryRateLimiter', () => {
  it('from cold sends one probe and holds the rest until its answer says the limits, then paces to them', async () => {
    const l = limiter();
    const times = grants(l, 4, 'other');
    await vi.advanceTimersByTimeAsync(5000);
    // The answer, 5 s later: 2 a window, this request alone in a 6 s window.
    l.observe(K, 'other', { status: 200, limit: 2, remaining: 1, resetInMs: 1000, elapsedMs: 5000 });
    await vi.advanceTimersByTimeAsync(20_000);
    // The probe at 0, one more slot at once, the next two as those leave the window (plus at
    // most half a window for answers as slow as this one).
    expect(await Promise.all(times)).toEqual([0, 5000, 9000, 14_000]);
  });

  it('a probe that got no answer lets the next one go; after 3 answers without headers it paces to the published limit', async () => {
    const l = limiter();
    const times = grants(l, 5);
    await vi.advanceTimersByTimeAsync(100);
    l.observe(K, 'withdraw', { elapsedMs: 100 }); // timeout: no answer, the next probe goes
    await vi.advanceTimersByTimeAsync(100);
    for (let i = 0; i < 3; i++) {
      l.observe(K, 'withdraw', { status: 502, elapsedMs: 100 }); // answers without rate-limit headers
      await vi.advanceTimersByTimeAsync(100);
    }
    expect(await Promise.all(times)).toEqual([0, 100, 200, 300, 400]);
    // Nothing to learn from this service: the published 50 a minute, at once.
    expect(await Promise.all(grants(l, 3))).toEqual([0, 0, 0]);
  });

  it('paces to the published limit the service confirmed (50 withdrawals a minute): the 51st a second after the first leaves the window', async () => {
    const l = limiter();
    l.observe(K, 'withdraw', { status: 200, limit: 50, elapsedMs: 0 });
    const times = grants(l, 51);
    await vi.advanceTimersByTimeAsync(61_000);
    const all = await Promise.all(times);
    expect(all.slice(0, 50).every((t) => t === 0)).toBe(true);
    // Answers come at once here: a slot is held for the window alone.
    expect(all[50]).toBe(60_000);
  });

  it('learns the limit and, from an answer alone in its window, the window length', async () => {
    const l = limiter();
    await l.acquire(K, 'other', wait);
    l.observe(K, 'other', { status: 200, limit: 3, remaining: 2, resetInMs: 1990, elapsedMs: 10 });
    const times = grants(l, 4, 'other');
    await vi.advanceTimersByTimeAsync(4000);
    // The window (1990 + 10), and the 10 ms the answer took on top: see the next test.
    expect(await Promise.all(times)).toEqual([0, 0, 2010, 2010]);
  });

  // A loaded host: an answer that came late means the service may have counted the request that
  // late, so the slot is held that much past the 2 s window; a stalled host (1.5 s) at most 1 s.
  it.each([
    ['holds a slot for the window plus the time answers take, so late arrivals never overlap the next window', 400, 2400],
    ['holds a slot at most half a window longer than the window, however slow the answers were', 1500, 3000],
  ])('%s', async (_what, elapsedMs, secondGrant) => {
    const l = limiter();
    await l.acquire(K, 'other', wait);
    l.observe(K, 'other', { status: 200, limit: 2, remaining: 1, resetInMs: 2000 - elapsedMs, elapsedMs });
    const times = grants(l, 2, 'other');
    await vi.advanceTimersByTimeAsync(5000);
    expect(await Promise.all(times)).toEqual([0, secondGrant]);
  });

  it('a window the service reports full waits for its reset, even with room in the local count', async () => {
    const l = limiter();
    await l.acquire(K, 'other', wait);
    l.observe(K, 'other', { status: 200, limit: 100, remaining: 0, resetInMs: 7000, elapsedMs: 5 });
    const [t] = grants(l, 1, 'other');
    await vi.advanceTimersByTimeAsync(7000);
    expect(await t).toBe(7000);
  });

  it('a 429 holds the bucket for its Retry-After', async () => {
    const l = limiter();
    await l.acquire(K, 'other', wait);
    l.observe(K, 'other', { status: 429, retryAfterMs: 3000, elapsedMs: 5 });
    const [t] = grants(l, 1, 'other');
    await vi.advanceTimersByTimeAsync(3000);
    expect(await t).toBe(3000);
  });

  it('a service counting fewer requests than the local log (a reset or shorter window) frees the slots it reports', async () => {
    const l = limiter();
    l.observe(K, 'withdraw', { status: 200, limit: 3, elapsedMs: 0 });
    await Promise.all(grants(l, 2));
    l.observe(K, 'withdraw', { status: 200, remaining: 2, resetInMs: 60_000, elapsedMs: 0 });
    // The second answer says 2 left as well: the service no longer counts the first request.
    l.observe(K, 'withdraw', { status: 200, remaining: 2, resetInMs: 60_000, elapsedMs: 0 });
    expect(await Promise.all(grants(l, 2))).toEqual([0, 0]);
  });

  it('a call that cannot be served in maxWaitMs fails at once with RATE_LIMITED; an abort ends the wait with its reason', async () => {
    const l = limiter();
    l.observe(K, 'withdraw', { status: 200, limit: 1, elapsedMs: 0 });
    await l.acquire(K, 'withdraw', wait);
    const error = await l.acquire(K, 'withdraw', { maxWaitMs: 5000 }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(RateLimitError);
    expect(error).toMatchObject({ code: 'RATE_LIMITED', retryable: true, retryAfter: 60 });
    const controller = new AbortController();
    const waiting = l.acquire(K, 'withdraw', { ...wait, signal: controller.signal }).catch((e: unknown) => e);
    controller.abort(new Error('stop'));
    expect(await waiting).toMatchObject({ message: 'stop' });
  });
});
