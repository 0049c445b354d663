/** The in-process limiter's rules (src/core/pacing/bucket-model.ts, memory-limiter.ts) on a fake clock. */
import { inspect } from 'node:util';
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
  it('keeps one budget per merchant and bucket, and inspects as their count without the merchant keys', async () => {
    const l = limiter();
    // The first request of each bucket goes at once (the cold probe); the next waits for its answer.
    await l.acquire('merchant-a', 'payment', wait);
    await l.acquire('merchant-a', 'withdraw', wait);
    await l.acquire('merchant-b', 'payment', wait);
    expect(inspect(l)).toBe('MemoryRateLimiter { buckets: 3 }');
    let aSent = false;
    let bSent = false;
    void l.acquire('merchant-a', 'payment', wait).then(() => (aSent = true));
    void l.acquire('merchant-b', 'payment', wait).then(() => (bSent = true));
    // Only merchant-b's probe is answered: only merchant-b's payment budget opens.
    l.observe('merchant-b', 'payment', { status: 200, limit: 100, remaining: 99, resetInMs: 60_000, elapsedMs: 1 });
    await vi.advanceTimersByTimeAsync(10);
    expect([aSent, bSent]).toEqual([false, true]);
    expect(inspect(l)).not.toContain('merchant');
  });

  it('from cold sends one probe and holds the rest until its answer says the limits, then paces to them', async () => {
    const l = limiter();
    const times = grants(l, 4, 'other');
    await vi.advanceTimersByTimeAsync(5000);
    // The answer, 5 s later: 2 a window, this request alone in a 6 s window.
    l.observe(K, 'other', { status: 200, limit: 2, remaining: 1, resetInMs: 1000, elapsedMs: 5000 });
    await vi.advanceTimersByTimeAsync(100);
    l.observe(K, 'other', { status: 200, elapsedMs: 100 }); // the second, answered 100 ms after it went
    await vi.advanceTimersByTimeAsync(20_000);
    // The probe at 0, one more slot at once, the next two a window after the answers of those.
    expect(await Promise.all(times)).toEqual([0, 5000, 11_000, 11_100]);
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
    await vi.advanceTimersByTimeAsync(0);
    for (let i = 0; i < 50; i++) l.observe(K, 'withdraw', { status: 200, elapsedMs: 0 });
    await vi.advanceTimersByTimeAsync(61_000);
    const all = await Promise.all(times);
    expect(all.slice(0, 50).every((t) => t === 0)).toBe(true);
    expect(all[50]).toBe(60_000);
  });

  it('learns the limit and, from an answer alone in its window, the window length', async () => {
    const l = limiter();
    await l.acquire(K, 'other', wait);
    l.observe(K, 'other', { status: 200, limit: 3, remaining: 2, resetInMs: 1990, elapsedMs: 10 });
    const times = grants(l, 4, 'other');
    await vi.advanceTimersByTimeAsync(10);
    for (let i = 0; i < 2; i++) l.observe(K, 'other', { status: 200, elapsedMs: 10 });
    await vi.advanceTimersByTimeAsync(4000);
    // The window (1990 + 10), counted from each answer.
    expect(await Promise.all(times)).toEqual([0, 0, 2000, 2010]);
  });

  it('counts a slot from its answer: a host whose answers come late never overlaps the next window, and one whose answers come at once loses nothing', async () => {
    const l = limiter();
    await l.acquire(K, 'other', wait);
    // A stalled host: the answer comes 1.5 s after the slot was taken; the service may have counted it at 1.499 s.
    await vi.advanceTimersByTimeAsync(1500);
    l.observe(K, 'other', { status: 200, limit: 2, remaining: 1, resetInMs: 500, elapsedMs: 1500 });
    const times = grants(l, 3, 'other');
    await vi.advanceTimersByTimeAsync(0);
    l.observe(K, 'other', { status: 200, elapsedMs: 0 }); // the second, answered at once
    await vi.advanceTimersByTimeAsync(5000);
    // A window (2000) after each answer: the first's at 1500 (0 here), the second's at 1500.
    expect(await Promise.all(times)).toEqual([0, 2000, 2000]);
  });

  it('a slot whose request is still in flight stays taken: the next call waits for its answer', async () => {
    const l = limiter();
    l.observe(K, 'other', { status: 200, limit: 1, elapsedMs: 0 });
    await l.acquire(K, 'other', wait);
    let granted = false;
    const next = l.acquire(K, 'other', { maxWaitMs: 600_000 }).then(() => (granted = true));
    await vi.advanceTimersByTimeAsync(120_000);
    expect(granted).toBe(false);
    l.observe(K, 'other', { status: 200, elapsedMs: 120_000 });
    await vi.advanceTimersByTimeAsync(60_000);
    await next;
    expect(granted).toBe(true);
  });

  it("a window its own slots fill frees a window after their answers, not at the service's reset rounded up to the second", async () => {
    const l = limiter();
    await l.acquire(K, 'other', wait);
    l.observe(K, 'other', { status: 200, limit: 2, remaining: 1, resetInMs: 2000, elapsedMs: 0 });
    await l.acquire(K, 'other', wait);
    await vi.advanceTimersByTimeAsync(100);
    // Full, says the service, until a reset it rounds up: 1.9 s after this answer.
    l.observe(K, 'other', { status: 200, remaining: 0, resetInMs: 2900, elapsedMs: 100 });
    const [t] = grants(l, 1, 'other');
    await vi.advanceTimersByTimeAsync(3000);
    // The first slot, answered at 0, leaves the 2 s window at 2000 (1900 from here).
    expect(await t).toBe(1900);
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

  it("answers that overtake each other free no slot the service still counts: a remaining read before later counts' answers came", async () => {
    const l = limiter();
    l.observe(K, 'withdraw', { status: 200, limit: 5, elapsedMs: 0 });
    await Promise.all(grants(l, 5));
    await vi.advanceTimersByTimeAsync(100);
    // The five were sent together; the service counted them in order (remaining 4, 3, 2, 1, 0),
    // and the answers came back the other way round: the first one counted answers last.
    for (const remaining of [0, 1, 2, 3, 4]) {
      l.observe(K, 'withdraw', { status: 200, limit: 5, remaining, resetInMs: 60_000, elapsedMs: 100 });
      await vi.advanceTimersByTimeAsync(1);
    }
    // Five counted in a window of five: no slot until the window frees one, however the last
    // answer to arrive reads.
    let sent = false;
    void l.acquire(K, 'withdraw', wait).then(() => (sent = true));
    await vi.advanceTimersByTimeAsync(5000);
    expect(sent).toBe(false);
  });

  it('an answer frees the slots its remaining reports when no other answer came while it was out: it does not count itself as one', async () => {
    const l = limiter();
    l.observe(K, 'withdraw', { status: 200, limit: 3, elapsedMs: 0 });
    // Three requests one after another, each sent a millisecond after the answer before it.
    for (const remaining of [2, 1]) {
      await l.acquire(K, 'withdraw', wait);
      await vi.advanceTimersByTimeAsync(10);
      l.observe(K, 'withdraw', { status: 200, limit: 3, remaining, resetInMs: 60_000, elapsedMs: 10 });
      await vi.advanceTimersByTimeAsync(1);
    }
    await l.acquire(K, 'withdraw', wait);
    await vi.advanceTimersByTimeAsync(10);
    // The third is answered with 2 left: the service counts only it (its window was reset), so two
    // of the three slots counted here are free at once.
    l.observe(K, 'withdraw', { status: 200, limit: 3, remaining: 2, resetInMs: 60_000, elapsedMs: 10 });
    let granted = 0;
    for (const slot of grants(l, 3)) void slot.then(() => granted++);
    await vi.advanceTimersByTimeAsync(1000);
    // Two free now; the third slot is the answered request's own, counted until the window frees it.
    expect(granted).toBe(2);
  });

  it('a window another client fills is held until its reset, though requests of its own were still in flight when it read full', async () => {
    const l = limiter();
    await l.acquire(K, 'withdraw', wait); // the cold probe
    l.observe(K, 'withdraw', { status: 200, limit: 10, remaining: 9, resetInMs: 60_000, elapsedMs: 10 });
    await Promise.all(grants(l, 6));
    // Another client's 3 were counted before the first of the 6 to be answered: 5 left, 5 in flight.
    const answer = (remaining: number) =>
      l.observe(K, 'withdraw', { status: 200, limit: 10, remaining, resetInMs: 60_000, elapsedMs: 10 });
    answer(5);
    let granted = 0;
    for (const later of grants(l, 3)) void later.then(() => granted++);
    await vi.advanceTimersByTimeAsync(100);
    expect(granted).toBe(0);
    for (const remaining of [4, 3, 2, 1, 0]) {
      answer(remaining);
      await vi.advanceTimersByTimeAsync(1);
    }
    await vi.advanceTimersByTimeAsync(59_000);
    expect(granted).toBe(0);
    await vi.advanceTimersByTimeAsync(2000);
    expect(granted).toBe(3);
  });

  it('a window read full while its own requests were in flight frees what they leave once all are answered, not at the reset', async () => {
    const l = limiter();
    await l.acquire(K, 'withdraw', wait);
    l.observe(K, 'withdraw', { status: 200, limit: 5, remaining: 4, resetInMs: 60_000, elapsedMs: 10 });
    await Promise.all(grants(l, 3));
    // The last of the three counted answers first (1 left, 2 in flight: full, in doubt); the other
    // two, counted before it, answer after it: the service never counted more than these four.
    for (const remaining of [1, 3, 2]) {
      l.observe(K, 'withdraw', { status: 200, limit: 5, remaining, resetInMs: 60_000, elapsedMs: 10 });
      await vi.advanceTimersByTimeAsync(1);
    }
    const [fifth, sixth] = grants(l, 2);
    await vi.advanceTimersByTimeAsync(1000);
    expect(await fifth).toBe(0);
    let sixthSent = false;
    void sixth?.then(() => (sixthSent = true));
    await vi.advanceTimersByTimeAsync(1000);
    expect(sixthSent).toBe(false);
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
