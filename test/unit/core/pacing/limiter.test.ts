/**
 * src/core/pacing/limiter.ts: the pieces every RateLimiter shares. Which bucket a request
 * counts in, the error of a call that found no slot, what a bucket learns from an answer's
 * rate-limit headers (BucketModel), and the first-come-first-served queue of waiting calls
 * (WaitQueue) on fake timers.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { RateLimitError } from '../../../../src/core/errors/service.js';
import {
  bucketOf,
  BucketModel,
  CLIENT_WARN,
  handClientWarn,
  MAX_WINDOW_MS,
  MIN_WINDOW_MS,
  pacingError,
  PUBLISHED_LIMITS,
  PUBLISHED_WINDOW_MS,
  type RateBucket,
  type RateLimiter,
  type RateLimitObservation,
  UNPACED_ABOVE,
  WaitQueue,
} from '../../../../src/core/pacing/limiter.js';
import type { Operation } from '../../../../src/core/policy.js';

afterEach(() => vi.useRealTimers());

/** A limiter clock reading, far from 0 so "blocked until 0" is plainly in the past. */
const NOW = 5_000_000;
const HOUR = 3_600_000;

describe('bucketOf', () => {
  it.each<[Operation, RateBucket]>([
    ['token', 'token'],
    ['payment.create', 'payment'],
    ['withdraw', 'withdraw'],
    ['withdraw.recover', 'withdraw'],
    ['status', 'other'],
  ])('counts %s requests in the %s bucket, as the spec limits its endpoints', (operation, bucket) => {
    expect(bucketOf(operation)).toBe(bucket);
  });
});

describe('the published limits', () => {
  it('are the spec table: 5 token, 100 payment, 50 withdraw and 100 other requests per 60 s window', () => {
    expect(PUBLISHED_LIMITS).toEqual({ token: 5, payment: 100, withdraw: 50, other: 100 });
    expect(PUBLISHED_WINDOW_MS).toBe(60_000);
  });

  it('cannot be changed by a merchant at run time', () => {
    expect(Object.isFrozen(PUBLISHED_LIMITS)).toBe(true);
  });

  it.each<RateBucket>(['token', 'payment', 'withdraw', 'other'])('start a cold %s bucket at its published limit and window, paced and not blocked', (bucket) => {
    const model = new BucketModel(bucket);
    expect(model).toMatchObject({ bucket, limit: PUBLISHED_LIMITS[bucket], windowMs: PUBLISHED_WINDOW_MS, blockedUntil: 0, unpaced: false, windowKnown: false });
  });
});

describe('pacingError', () => {
  it.each([
    [0, 1],
    [1, 1],
    [999, 1],
    [1000, 1],
    [1001, 2],
    [59_500, 60],
  ])('after a wait of %d ms tells the caller to retry in %d s (whole seconds, at least 1)', (waitMs, seconds) => {
    expect(pacingError('withdraw', 50, 60_000, waitMs).retryAfter).toBe(seconds);
  });

  it('is a retryable RATE_LIMITED RateLimitError saying the bucket, its limit and window, and that nothing was sent', () => {
    const error = pacingError('withdraw', 50, 60_000, 12_300);
    expect(error).toBeInstanceOf(RateLimitError);
    expect(error).toMatchObject({ code: 'RATE_LIMITED', retryable: true, retryAfter: 13 });
    expect(error.message).toMatch(/^RATE_LIMITED: /);
    expect(error.message).toContain('50 withdraw requests per 60 s');
    expect(error.message).toContain('about 13 s');
    expect(error.message).toContain('Nothing was sent');
  });

  it('states a measured window in whole seconds', () => {
    expect(pacingError('other', 3, 2010, 500).message).toContain('3 other requests per 2 s');
  });

  it('names the pacing state shared in Redis, not the service, when that is where the limit came from', () => {
    const message = pacingError('payment', 1, 3_600_000, 7_200_000, 'redis').message;
    expect(message).toContain('the pacing state shared in Redis allows 1 payment requests per 3600 s');
    expect(message).not.toContain('the service allows');
  });
});

function answer(o: Partial<RateLimitObservation>): RateLimitObservation {
  return { status: 200, elapsedMs: 10, ...o };
}

describe('BucketModel.learn: the limit', () => {
  it('adopts the limit the service states', () => {
    const model = new BucketModel('other');
    model.learn(answer({ limit: 30 }), NOW, 0);
    expect(model.limit).toBe(30);
  });

  it.each([0, -5, 2.5, Number.NaN, Number.POSITIVE_INFINITY])('keeps the limit it had when the service states %d', (limit) => {
    const model = new BucketModel('withdraw');
    model.learn(answer({ limit }), NOW, 0);
    expect(model.limit).toBe(50);
  });

  it(`stops pacing a bucket whose limit is above ${UNPACED_ABOVE} requests a window, and paces it again when the limit falls`, () => {
    const model = new BucketModel('other');
    model.learn(answer({ limit: UNPACED_ABOVE }), NOW, 0);
    expect(model.unpaced).toBe(false);
    model.learn(answer({ limit: UNPACED_ABOVE + 1 }), NOW, 0);
    expect(model.unpaced).toBe(true);
    model.learn(answer({ limit: 100 }), NOW, 0);
    expect(model.unpaced).toBe(false);
  });
});

describe('BucketModel.learn: a 429', () => {
  it.each([
    ['for its Retry-After', { retryAfterMs: 3000 }, 3000],
    ['for Retry-After rather than the reset header (the spec prefers it)', { retryAfterMs: 2000, resetInMs: 9000 }, 2000],
    ['until the reset when there is no Retry-After', { resetInMs: 5000 }, 5000],
    ['for 1 s when it says neither', {}, 1000],
    ['for 1 s when its reset is in the past', { resetInMs: -4000 }, 1000],
    ['for 1 s when its reset is more than an hour away', { resetInMs: HOUR + 1 }, 1000],
    ['for a Retry-After of 0 only until now', { retryAfterMs: 0, resetInMs: 9000 }, 0],
  ])('holds the bucket %s', (_what, o, waitMs) => {
    const model = new BucketModel('payment');
    expect(model.learn(answer({ status: 429, ...o }), NOW, 0)).toBeUndefined();
    expect(model.blockedUntil).toBe(NOW + waitMs);
  });

  it('does not believe a Retry-After of more than an hour: the bucket is not held for it', () => {
    const model = new BucketModel('payment');
    model.learn(answer({ status: 429, retryAfterMs: HOUR + 1 }), NOW, 0);
    expect(model.blockedUntil).toBe(0);
    model.learn(answer({ status: 429, retryAfterMs: HOUR }), NOW, 0);
    expect(model.blockedUntil).toBe(NOW + HOUR);
  });

  it('never shortens a hold already in place', () => {
    const model = new BucketModel('payment');
    model.learn(answer({ status: 429, retryAfterMs: 10_000 }), NOW, 0);
    model.learn(answer({ status: 429, retryAfterMs: 1000 }), NOW + 1, 0);
    expect(model.blockedUntil).toBe(NOW + 10_000);
  });

  it('learns nothing of free slots from a 429, even with X-RateLimit-Remaining', () => {
    const model = new BucketModel('payment');
    expect(model.learn(answer({ status: 429, limit: 100, remaining: 99, resetInMs: 30_000 }), NOW, 0)).toBeUndefined();
    expect(model.windowMs).toBe(PUBLISHED_WINDOW_MS);
  });
});

describe('BucketModel.learn: the window', () => {
  /** An answer alone in its window: limit 3, 2 remaining, reset `resetInMs` after the answer. */
  const alone = (resetInMs: number, elapsedMs = 10) => answer({ limit: 3, remaining: 2, resetInMs, elapsedMs });

  it('measures the window from an answer alone in it: the reset plus the time the answer took', () => {
    const model = new BucketModel('other');
    model.learn(alone(1990, 10), NOW, 0);
    expect(model.windowMs).toBe(2000);
    expect(model.windowKnown).toBe(true);
  });

  it('rounds a fractional measurement up, so the window errs long', () => {
    const model = new BucketModel('other');
    model.learn(alone(1990, 10.2), NOW, 0);
    expect(model.windowMs).toBe(2001);
  });

  it('keeps the shortest measurement: a longer one later does not replace it, a shorter one does', () => {
    const model = new BucketModel('other');
    model.learn(alone(1990), NOW, 0);
    model.learn(alone(2990), NOW, 0);
    expect(model.windowMs).toBe(2000);
    model.learn(alone(1790), NOW, 0);
    expect(model.windowMs).toBe(1800);
  });

  it('takes a longer window after a 429 showed the model wrong', () => {
    const model = new BucketModel('other');
    model.learn(alone(1990), NOW, 0);
    model.learn(answer({ status: 429, retryAfterMs: 1000 }), NOW, 0);
    expect(model.windowKnown).toBe(false);
    model.learn(alone(4990), NOW + 2000, 0);
    expect(model.windowMs).toBe(5000);
  });

  it('learns no window from an answer that is not alone in its window', () => {
    const model = new BucketModel('other');
    model.learn(answer({ limit: 3, remaining: 1, resetInMs: 1990 }), NOW, 0);
    expect(model.windowMs).toBe(PUBLISHED_WINDOW_MS);
    expect(model.windowKnown).toBe(false);
  });

  it.each([
    ['shorter than 1 s', MIN_WINDOW_MS - 11],
    ['longer than an hour', MAX_WINDOW_MS - 9],
  ])('does not believe a measured window %s', (_what, resetInMs) => {
    const model = new BucketModel('other');
    model.learn(alone(resetInMs), NOW, 0);
    expect(model.windowMs).toBe(PUBLISHED_WINDOW_MS);
  });

  it.each([
    ['1 s', MIN_WINDOW_MS - 10, MIN_WINDOW_MS],
    ['1 h', MAX_WINDOW_MS - 10, MAX_WINDOW_MS],
  ])('believes a measured window of exactly %s', (_what, resetInMs, window) => {
    const model = new BucketModel('other');
    model.learn(alone(resetInMs), NOW, 0);
    expect(model.windowMs).toBe(window);
  });

  // BUG (src/core/pacing/limiter.ts:148): a measurement outside 1 s..1 h is thrown away, yet
  // #windowKnown is set to true, so the getter claims a measured window while windowMs is still
  // the published 60 s assumed, and from then on a real window longer than 60 s is refused as
  // "longer than the shortest seen" (until a 429 resets the flag).
  it('a measurement it does not believe leaves the window unknown, so a later longer real window is still adopted', () => {
    const model = new BucketModel('other');
    model.learn(alone(400), NOW, 0); // a 410 ms window: a measurement gone wrong
    expect(model.windowKnown).toBe(false);
    model.learn(alone(89_990), NOW + 1000, 0);
    expect(model.windowMs).toBe(90_000);
  });
});

describe('BucketModel.learn: free slots', () => {
  it.each([
    ['the remaining slots when none is in flight', 40, 0, 40],
    ['the remaining slots less those of requests still in flight', 10, 3, 7],
    ['none when requests in flight use up what remains', 2, 5, 0],
    ['none when the window is full', 0, 0, 0],
  ])('reports %s', (_what, remaining, inFlight, free) => {
    const model = new BucketModel('payment');
    expect(model.learn(answer({ remaining, resetInMs: 30_000 }), NOW, inFlight)).toBe(free);
  });

  it('holds the bucket until the reset when nothing is free, and not when something is', () => {
    const full = new BucketModel('payment');
    full.learn(answer({ remaining: 2, resetInMs: 7000 }), NOW, 2);
    expect(full.blockedUntil).toBe(NOW + 7000);
    const room = new BucketModel('payment');
    room.learn(answer({ remaining: 3, resetInMs: 7000 }), NOW, 2);
    expect(room.blockedUntil).toBe(0);
  });

  it("does not hold until the service's reset (rounded up to a whole second) when its own slots already fill the window", () => {
    const own = new BucketModel('payment');
    own.learn(answer({ limit: 30, remaining: 0, resetInMs: 5999 }), NOW, 0, 30);
    expect(own.blockedUntil).toBe(0);
    // Requests it does not count (another client of the merchant) fill it: the reset holds.
    const others = new BucketModel('payment');
    others.learn(answer({ limit: 30, remaining: 0, resetInMs: 5999 }), NOW, 0, 12);
    expect(others.blockedUntil).toBe(NOW + 5999);
  });

  it('never moves a hold back for a window reported full with an earlier reset', () => {
    const model = new BucketModel('payment');
    model.learn(answer({ status: 429, retryAfterMs: 20_000 }), NOW, 0);
    model.learn(answer({ remaining: 0, resetInMs: 5000 }), NOW, 0);
    expect(model.blockedUntil).toBe(NOW + 20_000);
  });

  it.each([
    ['no X-RateLimit-Remaining', { resetInMs: 5000 }],
    ['no X-RateLimit-Reset', { remaining: 0 }],
    ['a fractional remaining count', { remaining: 1.5, resetInMs: 5000 }],
    ['a reset in the past', { remaining: 0, resetInMs: -1 }],
    ['a reset more than an hour away', { remaining: 0, resetInMs: HOUR + 1 }],
    ['no answer at all (a timeout)', { status: undefined }],
  ])('learns no free slots and sets no hold from %s', (_what, o) => {
    const model = new BucketModel('payment');
    expect(model.learn(answer(o), NOW, 0)).toBeUndefined();
    expect(model.blockedUntil).toBe(0);
  });
});

describe('WaitQueue', () => {
  const timeoutError = () => new Error('no slot in time');

  it('hands back the calls whose store time is spent, keeping the others and the unbounded ones', () => {
    const queue = new WaitQueue();
    const spent: number[] = [];
    const storeBudget = { leftMs: () => 0, spend: (ms: number) => void spent.push(ms) };
    for (const storeMs of [300, 1000, undefined]) queue.add({ maxWaitMs: 60_000, storeBudget }, NOW, timeoutError, storeMs).catch(() => undefined);
    expect(queue.leastStoreLeft()).toBe(300);
    expect(queue.spendStore(100)).toEqual([]);
    expect(queue.leastStoreLeft()).toBe(200);
    expect(queue.spendStore(200).map((w) => w.storeLeftMs)).toEqual([0]);
    expect(queue.length).toBe(2);
    expect(queue.leastStoreLeft()).toBe(700);
    expect(queue.spendStore(700)).toHaveLength(1);
    expect(queue.leastStoreLeft()).toBe(Number.POSITIVE_INFINITY);
    // Each call's budget was charged with what it waited: 3 calls × 100, 3 × 200, 2 × 700.
    expect(spent).toEqual([100, 100, 100, 200, 200, 200, 700, 700]);
    for (const w of queue.drain()) w.grant();
  });

  it('serves waiting calls first come first served, each with the slot name it was granted', async () => {
    vi.useFakeTimers();
    const queue = new WaitQueue();
    const calls = [queue.add({ maxWaitMs: 60_000 }, NOW, timeoutError), queue.add({ maxWaitMs: 60_000 }, NOW, timeoutError)];
    expect(queue.length).toBe(2);
    queue.first()?.grant('slot-a');
    expect(queue.length).toBe(1); // gone at once: the pump that granted it sees the next waiter
    queue.first()?.grant();
    await expect(Promise.all(calls)).resolves.toEqual(['slot-a', undefined]);
    expect(queue.length).toBe(0);
    expect(vi.getTimerCount()).toBe(0);
  });

  it("rejects a call with onTimeout's error once its maxWaitMs pass, and not before", async () => {
    vi.useFakeTimers();
    const queue = new WaitQueue();
    const onTimeout = vi.fn(timeoutError);
    let outcome: unknown;
    queue.add({ maxWaitMs: 5000 }, NOW, onTimeout).catch((error: unknown) => (outcome = error));
    await vi.advanceTimersByTimeAsync(4999);
    expect(outcome).toBeUndefined();
    expect(queue.length).toBe(1);
    await vi.advanceTimersByTimeAsync(1);
    expect(outcome).toEqual(new Error('no slot in time'));
    expect(onTimeout).toHaveBeenCalledTimes(1);
    expect(queue.length).toBe(0);
  });

  it.each([0, 0.2, -5])('gives a call with maxWaitMs %d a timer of 1 ms, not an immediate or negative one', async (maxWaitMs) => {
    vi.useFakeTimers();
    const queue = new WaitQueue();
    let outcome: unknown;
    queue.add({ maxWaitMs }, NOW, timeoutError).catch((error: unknown) => (outcome = error));
    await vi.advanceTimersByTimeAsync(0);
    expect(outcome).toBeUndefined();
    expect(queue.length).toBe(1);
    await vi.advanceTimersByTimeAsync(1);
    expect(outcome).toEqual(new Error('no slot in time'));
    expect(queue.length).toBe(0);
  });

  it("ends an aborted call's wait with the signal's reason and leaves the others waiting", async () => {
    vi.useFakeTimers();
    const queue = new WaitQueue();
    const controller = new AbortController();
    const aborted = queue.add({ maxWaitMs: 60_000, signal: controller.signal }, NOW, timeoutError);
    const other = queue.add({ maxWaitMs: 60_000 }, NOW, timeoutError);
    const reason = new Error('merchant cancelled');
    controller.abort(reason);
    await expect(aborted).rejects.toBe(reason);
    expect(queue.length).toBe(1);
    queue.first()?.grant('slot-b');
    await expect(other).resolves.toBe('slot-b');
  });

  it('refuses a call whose signal already aborted without queueing it or calling onTimeout', async () => {
    vi.useFakeTimers();
    const queue = new WaitQueue();
    const onTimeout = vi.fn(timeoutError);
    const reason = new Error('already over');
    await expect(queue.add({ maxWaitMs: 60_000, signal: AbortSignal.abort(reason) }, NOW, onTimeout)).rejects.toBe(reason);
    expect(queue.length).toBe(0);
    expect(vi.getTimerCount()).toBe(0);
    expect(onTimeout).not.toHaveBeenCalled();
  });

  it('does not take a granted slot back when the signal aborts right after the grant', async () => {
    vi.useFakeTimers();
    const queue = new WaitQueue();
    const controller = new AbortController();
    const waiting = queue.add({ maxWaitMs: 60_000, signal: controller.signal }, NOW, timeoutError);
    queue.first()?.grant('slot-c');
    controller.abort(new Error('too late'));
    await expect(waiting).resolves.toBe('slot-c');
  });

  it('ignores a grant to a call that already gave up', async () => {
    vi.useFakeTimers();
    const queue = new WaitQueue();
    const controller = new AbortController();
    const waiting = queue.add({ maxWaitMs: 60_000, signal: controller.signal }, NOW, timeoutError);
    const stale = queue.first();
    const reason = new Error('gave up');
    controller.abort(reason);
    stale?.grant('slot-d');
    await expect(waiting).rejects.toBe(reason);
  });

  it('knows the latest deadline of the waiting calls (0 when none waits)', () => {
    vi.useFakeTimers();
    const queue = new WaitQueue();
    expect(queue.latestDeadline()).toBe(0);
    void queue.add({ maxWaitMs: 30_000 }, NOW, timeoutError).catch(() => undefined);
    void queue.add({ maxWaitMs: 90_000 }, NOW + 1000, timeoutError).catch(() => undefined);
    void queue.add({ maxWaitMs: 10_000 }, NOW + 2000, timeoutError).catch(() => undefined);
    expect(queue.latestDeadline()).toBe(NOW + 91_000);
    for (const waiter of queue.drain()) waiter.fail(new Error('stop'));
  });

  it('drains every waiting call in order, emptying the queue; failing them clears their timers', async () => {
    vi.useFakeTimers();
    const queue = new WaitQueue();
    const calls = [1, 2, 3].map(() => queue.add({ maxWaitMs: 60_000 }, NOW, timeoutError));
    const drained = queue.drain();
    expect(drained).toHaveLength(3);
    expect(queue.length).toBe(0);
    expect(queue.first()).toBeUndefined();
    drained.forEach((waiter, i) => waiter.fail(new Error(`limiter gave up ${i}`)));
    const outcomes = await Promise.allSettled(calls);
    expect(outcomes.map((o) => (o.status === 'rejected' ? (o.reason as Error).message : 'granted'))).toEqual(['limiter gave up 0', 'limiter gave up 1', 'limiter gave up 2']);
    expect(vi.getTimerCount()).toBe(0);
  });
});

describe('handClientWarn', () => {
  const plain: RateLimiter = { acquire: async () => undefined, observe: () => undefined };

  it("hands the client's warn to a limiter that takes one, called on the limiter", () => {
    const lines: string[] = [];
    const take = vi.fn<(warn: (message: string) => void) => void>();
    const limiter = { ...plain, [CLIENT_WARN]: take };
    handClientWarn(limiter, (message) => lines.push(message));
    expect(take).toHaveBeenCalledTimes(1);
    expect(take.mock.contexts[0]).toBe(limiter);
    take.mock.calls[0]?.[0]('redis is slow');
    expect(lines).toEqual(['redis is slow']);
  });

  it('leaves a limiter without the hook (or with a non-function under it) alone', () => {
    const warn = vi.fn();
    expect(() => handClientWarn(plain, warn)).not.toThrow();
    const odd = { ...plain, [CLIENT_WARN]: 'not a function' };
    expect(() => handClientWarn(odd, warn)).not.toThrow();
    expect(odd[CLIENT_WARN]).toBe('not a function');
    expect(warn).not.toHaveBeenCalled();
  });

  it('finds the hook by a registered symbol, so a limiter from another copy of the SDK (ESM beside CJS) still gets it', () => {
    const take = vi.fn();
    handClientWarn({ ...plain, [Symbol.for('myr-gateway.rate-limiter.client-warn')]: take }, () => undefined);
    expect(take).toHaveBeenCalledTimes(1);
  });
});
