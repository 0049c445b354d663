/**
 * src/core/pacing/bucket-model.ts: what a bucket learns from an answer's rate-limit headers
 * (its limit, its window, a hold the service imposed, the slots it says are free).
 */
import { describe, expect, it } from 'vitest';
import { BucketModel, MAX_WINDOW_MS, MIN_WINDOW_MS } from '../../../../src/core/pacing/bucket-model.js';
import {
  PUBLISHED_WINDOW_MS,
  type RateLimitObservation,
  UNPACED_ABOVE,
} from '../../../../src/core/pacing/limiter-contract.js';

/** A limiter clock reading, far from 0 so "blocked until 0" is plainly in the past. */
const NOW = 5_000_000;
const HOUR = 3_600_000;

function answer(o: Partial<RateLimitObservation>): RateLimitObservation {
  return { status: 200, elapsedMs: 10, ...o };
}

describe('BucketModel.learn: the limit', () => {
  it('adopts the limit the service states', () => {
    const model = new BucketModel('other');
    model.learn(answer({ limit: 30 }), NOW, 0);
    expect(model.limit).toBe(30);
  });

  it.each([0, -5, 2.5, Number.NaN, Number.POSITIVE_INFINITY])(
    'keeps the limit it had when the service states %d',
    (limit) => {
      const model = new BucketModel('withdraw');
      model.learn(answer({ limit }), NOW, 0);
      expect(model.limit).toBe(50);
    },
  );

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
    [
      'for Retry-After rather than the reset header (the spec prefers it)',
      { retryAfterMs: 2000, resetInMs: 9000 },
      2000,
    ],
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

describe("BucketModel.learn: the service's clock against ours (assumption A24)", () => {
  /** Limit 3, alone in its window, its reset 6.5 s after the answer on our clock, the service's Date `dateInMs` from ours. */
  const dated = (dateInMs: number | undefined, elapsedMs = 10) =>
    answer({ limit: 3, remaining: 2, resetInMs: 6500, elapsedMs, dateInMs });

  it.each<[string, (number | undefined)[], number]>([
    ['no Date: taken to agree', [undefined], 0],
    ['a Date in our second: agree', [-400], 0],
    ['a Date 3 s ahead of ours', [2600], 2600],
    ['a Date 3 s ahead, then a sharper one', [2600, 2990], 2990],
    ['a Date 3 s behind ours (the least the dates allow)', [-3400], -3400],
    ['dates an hour and more away: ignored', [3_600_001], 0],
    ['a clock stepped: the range starts anew from the answer that contradicts it', [2600, -3400], -3400],
  ])('%s', (_what, dates, offset) => {
    const model = new BucketModel('other');
    for (const date of dates) model.learn(dated(date), NOW, 0);
    expect(model.clockOffset).toBe(offset);
  });

  it("measures the window and the hold on the service's clock: a reset read 3 s early on a clock 3 s ahead", () => {
    const ahead = new BucketModel('other');
    // Our clock is 3 s ahead: the reset, 6.5 s away for the service, reads as 3.5 s.
    ahead.learn(answer({ limit: 3, remaining: 2, resetInMs: 3500, elapsedMs: 10, dateInMs: -3000 }), NOW, 0);
    expect(ahead.windowMs).toBe(6510);
    ahead.learn(answer({ limit: 3, remaining: 0, resetInMs: 3500, elapsedMs: 10, dateInMs: -3000 }), NOW, 0, 1);
    expect(ahead.blockedUntil).toBe(NOW + 6500);
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

  // A measurement outside 1 s..1 h is thrown away (narrowWindow): were the window then called
  // measured while still the published 60 s, a real window longer than 60 s would be refused as
  // "longer than the shortest seen" until a 429.
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
    full.learn(answer({ remaining: 0, resetInMs: 7000 }), NOW, 0);
    expect(full.blockedUntil).toBe(NOW + 7000);
    // Two of its own in flight: held as long, in doubt (whose requests fill it is not known yet).
    const filling = new BucketModel('payment');
    filling.learn(answer({ remaining: 2, resetInMs: 7000 }), NOW, 2);
    expect([filling.blockedUntil, filling.doubtUntil]).toEqual([0, NOW + 7000]);
    const room = new BucketModel('payment');
    room.learn(answer({ remaining: 3, resetInMs: 7000 }), NOW, 2);
    expect([room.blockedUntil, room.doubtUntil]).toEqual([0, 0]);
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

  it.each([
    // 10 a window; 3 of its own answered, 4 in flight. The first of those answered says 3 left: full
    // once the other 3 are counted, unless they were counted before it (answers overtake each other).
    ['its own, counted before the answer that said full (answers overtook each other)', [6, 5, 4], 0],
    // Counted after it: the service counts 10 while it has 7 of its own: another client.
    ['another client fills the window', [2, 1, 0], NOW + 7000],
  ])('full with requests of its own in flight: in doubt until they are answered, then %s', (_what, later, until) => {
    const model = new BucketModel('payment');
    model.learn(answer({ limit: 10, remaining: 3, resetInMs: 7000 }), NOW, 3, 7);
    expect([model.blockedUntil, model.doubtUntil]).toEqual([0, NOW + 7000]);
    later.forEach((remaining, i) => {
      model.learn(answer({ limit: 10, remaining, resetInMs: 7000 }), NOW, 2 - i, 7);
    });
    expect([model.blockedUntil, model.doubtUntil]).toEqual([until, 0]);
  });

  it('a doubt whose reset passed with its requests never answered is dropped: a later window read full starts its own', () => {
    const model = new BucketModel('payment');
    model.learn(answer({ limit: 10, remaining: 0, resetInMs: 7000 }), NOW, 3, 7);
    // Its three timed out (no headers); 8 s later a new burst: 6 left with 6 in flight, then its own answers.
    model.learn(answer({ limit: 10, remaining: 6, resetInMs: 7000 }), NOW + 8000, 6, 7);
    for (const [remaining, inFlight] of [
      [9, 4],
      [8, 3],
      [7, 2],
      [6, 1],
      [5, 0],
    ] as const)
      model.learn(answer({ limit: 10, remaining, resetInMs: 7000 }), NOW + 8000, inFlight, 7);
    // The new doubt's answers never showed more than its own 7 counted (the old doubt's 0 left is not counted).
    expect([model.blockedUntil, model.doubtUntil]).toEqual([0, 0]);
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
