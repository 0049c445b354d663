/**
 * Every row of the edge probe (src/core/pacing/edge-probe.ts): when a bucket sends one early
 * request at the next window's edge, and what its answer teaches. The same rows run through the
 * fleet's Lua in test/integration/redis-rate-edge-probe.test.ts.
 */
import { describe, expect, it } from 'vitest';
import { edgeProbeVerdict, planEdgeProbe, windowAfterAccepted } from '../../../../src/core/pacing/edge-probe.js';
import { ACCEPTED_ROWS, PLAN_ROWS, VERDICT_ROWS } from '../../../helpers/edge-probe-rows.js';

describe('planEdgeProbe', () => {
  it.each(PLAN_ROWS)('%s', (_what, row, expected) => {
    expect(planEdgeProbe(row)).toEqual(expected);
  });

  it('under a whole-second window the probe never arrives before the edge it tests', () => {
    // Every phase of the first edge and every delay of the lone request after its reset: the
    // lone request's edge (arrival + window) is never later than the probe's send time.
    const W = 6000;
    const plans: number[] = [];
    for (let phase = 0; phase < 1000; phase += 7) {
      const firstArrival = 1000 + phase;
      const previousResetAt = Math.ceil((firstArrival + W) / 1000) * 1000;
      for (const late of [1, 5, 40, 333, 999, 1500]) {
        const sentAt = previousResetAt + late;
        const arrival = sentAt + 2;
        const lone = { sentAt, answeredAt: arrival + 3, resetAt: Math.ceil((arrival + W) / 1000) * 1000 };
        // The upper bound measured from the first lone request, sent 2 ms before it arrived.
        const plan = planEdgeProbe({ state: 'ready', windowMs: previousResetAt - (firstArrival - 2), lone, previousResetAt });
        if (plan) plans.push(plan.at - (arrival + W));
      }
    }
    expect(plans.length).toBeGreaterThan(500);
    expect(Math.min(...plans)).toBeGreaterThanOrEqual(0);
  });
});

describe('edgeProbeVerdict', () => {
  it.each(VERDICT_ROWS)('%s → %s', (_what, answer, expected) => {
    expect(edgeProbeVerdict(answer)).toBe(expected);
  });
});

describe('windowAfterAccepted', () => {
  it.each(ACCEPTED_ROWS)('lone sent at %d, probe answered at %d → at most %d ms', (from, answered, expected) => {
    expect(windowAfterAccepted(from, answered)).toBe(expected);
  });
});
