/** The late-count bound the pacing bench prints (bench/late-count-bound.ts): the model's arithmetic. */
import { describe, expect, it } from 'vitest';
import { lateCountBound } from '../../../bench/late-count-bound.js';

const burst = { calls: 90, limit: 30, windowMs: 6000, bursts: 200, seed: 33 };

describe('lateCountBound', () => {
  it('counted on arrival: the ideal, two windows after the first send', () => {
    const bound = lateCountBound({ ...burst, latencyMs: 0, jitterMs: 0 });
    expect([bound.p10Ms, bound.medianMs, bound.p90Ms]).toEqual([12_000, 12_000, 12_000]);
    expect(bound.shareWithin(11_999)).toBe(0);
  });

  it("counted a fixed 500 ms late: the ideal plus four counts, slow start's lone one and three along a slot", () => {
    const bound = lateCountBound({ ...burst, latencyMs: 500, jitterMs: 0 });
    expect(bound.medianMs).toBe(14_000);
    expect(bound.shareWithin(14_000)).toBe(1);
  });

  it('counted 200 ms to 1 s late: between the least and the most the delays can add, the same for the same seed', () => {
    const bound = lateCountBound({ ...burst, latencyMs: 200, jitterMs: 800 });
    expect(bound.p10Ms).toBeGreaterThan(12_000 + 4 * 200);
    expect(bound.p90Ms).toBeLessThan(12_000 + 4 * 1000);
    expect(bound.p10Ms).toBeLessThanOrEqual(bound.medianMs);
    expect(bound.medianMs).toBeLessThanOrEqual(bound.p90Ms);
    expect(lateCountBound({ ...burst, latencyMs: 200, jitterMs: 800 })).toMatchObject({ medianMs: bound.medianMs });
  });
});
