/** src/testing/rate-count-delay.ts: how long the mock waits before counting one request against its rate limit. */
import { describe, expect, it } from 'vitest';
import { countDelayOf } from '../../../src/testing/rate-count-delay.js';

describe('countDelayOf', () => {
  it.each([
    [{ latencyMs: 200 }, 0.7, 200],
    [{ latencyMs: 200, jitterMs: 800 }, 0, 200],
    [{ latencyMs: 200, jitterMs: 800 }, 0.5, 600],
    [{ latencyMs: 200, jitterMs: 800 }, 1, 1000],
    [{ latencyMs: 0, jitterMs: 1000 }, 0.25, 250],
    // A random source that strays outside 0..1 is held to the stated range.
    [{ latencyMs: 100, jitterMs: 100 }, 7, 200],
    [{ latencyMs: 100, jitterMs: 100 }, -1, 100],
  ])('%o with a draw of %d waits %d ms', (option, draw, ms) => {
    expect(countDelayOf({ ...option, random: () => draw })?.()).toBe(ms);
  });

  it('draws anew for every request', () => {
    const draws = [0, 1, 0.5];
    const next = countDelayOf({ latencyMs: 0, jitterMs: 1000, random: () => draws.shift() ?? 0 });
    expect([next?.(), next?.(), next?.()]).toEqual([0, 1000, 500]);
  });

  it('counts on arrival when no delay is asked for, or a delay of nothing', () => {
    expect(countDelayOf(undefined)).toBeUndefined();
    expect(countDelayOf({ latencyMs: 0 })).toBeUndefined();
    expect(countDelayOf({ latencyMs: 0, jitterMs: 0 })).toBeUndefined();
  });

  it.each([
    [{ latencyMs: -1 }, 'latencyMs'],
    [{ latencyMs: 1.5 }, 'latencyMs'],
    [{ latencyMs: Number.NaN }, 'latencyMs'],
    [{ latencyMs: 60_001 }, 'latencyMs'],
    [{ latencyMs: 10, jitterMs: -5 }, 'jitterMs'],
    [{ latencyMs: 10, jitterMs: 1e9 }, 'jitterMs'],
  ])('refuses %o with a TypeError naming %s', (option, field) => {
    expect(() => countDelayOf(option)).toThrow(
      new TypeError(`rateLimitCountDelay.${field} must be a whole number of milliseconds from 0 to 60000`),
    );
  });
});
