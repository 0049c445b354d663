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

  it('under a whole-second window the probe never goes before the edge it tests', () => {
    // Every phase of the send within its second, and round trips short and long: when a probe is
    // planned, the lone request's edge (arrival + window) is never later than the probe's send time.
    const gaps: number[] = [];
    let none = 0;
    for (const W of [1000, 2000, 6000, 60_000]) {
      for (let sentAt = 10_000; sentAt < 11_000; sentAt += 7) {
        for (const [out, back] of [
          [1, 1],
          [2, 40],
          [150, 150],
          [400, 700],
        ] as const) {
          const arrival = sentAt + out;
          const lone = { sentAt, answeredAt: arrival + back, resetAt: Math.ceil((arrival + W) / 1000) * 1000 };
          const plan = planEdgeProbe({ state: 'ready', windowMs: Math.ceil(lone.resetAt - sentAt), lone });
          if (plan) gaps.push(plan.at - (arrival + W));
          else none++;
        }
      }
    }
    expect(gaps.length).toBeGreaterThan(1000);
    expect(none).toBeGreaterThan(0); // the answers that came in a later second, and the small gains
    expect(Math.min(...gaps)).toBeGreaterThanOrEqual(0);
  });

  it("on a clock found off, with the answer's Date, counted up to 1 s late and read up to a second off: the probe never goes before the edge, and goes for nearly every lone answer", () => {
    // A queue before the service's counter: each request counted `late` ms after it arrived,
    // answered (and dated) at that moment, the answer back `back` ms later; the process reads the
    // reset and the Date `off` ms late alike (its clock's offset as far as it knows it).
    const gaps: number[] = [];
    let lone = 0;
    for (const W of [1000, 2000, 6000, 60_000]) {
      for (let sentAt = 10_000; sentAt < 11_000; sentAt += 7) {
        for (const [late, back, off] of [
          [0, 1, 0],
          [200, 5, 300],
          [550, 40, 0],
          [1000, 150, 999],
          [1300, 10, 500],
        ] as const) {
          const counted = sentAt + 1 + late;
          const answeredAt = counted + back;
          const resetAt = Math.ceil((counted + W) / 1000) * 1000 + off;
          const datedAt = Math.floor(counted / 1000) * 1000 + off;
          const plan = planEdgeProbe({
            state: 'ready',
            windowMs: Math.ceil(resetAt - sentAt),
            lone: { sentAt, answeredAt, resetAt, datedAt },
          });
          lone++;
          if (plan) gaps.push(plan.at - (counted + W));
        }
      }
    }
    expect(Math.min(...gaps)).toBeGreaterThanOrEqual(0);
    expect(gaps.length / lone).toBeGreaterThan(0.9);
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
