/**
 * The rows of the edge probe (src/core/pacing/edge-probe.ts), shared by its unit test and by the
 * test that runs the fleet's Lua over them (test/integration/redis-rate-edge-probe.test.ts).
 */
import { EDGE_PROBE_MIN_GAIN_MS, type EdgePlan, type EdgePlanInput, type edgeProbeVerdict } from '../../src/core/pacing/edge-probe.js';

/** 30 per 6 s: the first reset (7 s) lay 700 ms past the true edge, so the upper bound is 6,720 ms. */
function input(over: Partial<Omit<EdgePlanInput, 'lone'>> & { lone?: Partial<EdgePlanInput['lone']> } = {}): EdgePlanInput {
  return {
    state: over.state ?? 'ready',
    windowMs: over.windowMs ?? 6720,
    previousResetAt: 'previousResetAt' in over ? over.previousResetAt : 7000,
    lone: { sentAt: 7020, answeredAt: 7030, resetAt: 14_000, ...over.lone },
  };
}

export const PLAN_ROWS: [string, EdgePlanInput, EdgePlan | undefined][] = [
  ['the second lone answer after a reset 700 ms loose: probe a whole-second window after its answer', input(), { at: 13_030, until: 13_750 }],
  ['its request went late (a loaded host): still the whole-second window after its answer', input({ lone: { sentAt: 7400, answeredAt: 7600, resetAt: 14_000 } }), { at: 13_600, until: 14_320 }],
  ['a window of 6.5 s: the whole seconds say 6 s, the probe goes (and will be refused)', input({ windowMs: 7200, lone: { resetAt: 14_000 } }), { at: 13_030, until: 14_230 }],
  ['a probe already out', input({ state: 'out' }), undefined],
  ['a probe already answered', input({ state: 'done' }), undefined],
  ['no lone answer before', input({ previousResetAt: undefined }), undefined],
  ['sent before the previous reset: its window did not begin on that rounding', input({ lone: { sentAt: 6990 } }), undefined],
  ['sent at the previous reset exactly', input({ lone: { sentAt: 7000 } }), { at: 13_030, until: 13_750 }],
  ['gain below the minimum: no 429 risked for it', input({ windowMs: 6000 + EDGE_PROBE_MIN_GAIN_MS - 1 }), undefined],
  ['gain exactly the minimum', input({ windowMs: 6000 + EDGE_PROBE_MIN_GAIN_MS }), { at: 13_030, until: 13_130 }],
  ['a whole-second window longer than the bound (lone answers far apart)', input({ lone: { resetAt: 21_000 } }), undefined],
  ['a whole-second window under the shortest believed (1 s)', input({ lone: { resetAt: 8_900 } }), undefined],
  ['the shortest believed window', input({ windowMs: 2000, lone: { resetAt: 9_000 } }), { at: 8_030, until: 9_030 }],
  ['NaN times', input({ lone: { sentAt: Number.NaN } }), undefined],
];

export const VERDICT_ROWS: [string, { status?: number; limit?: number }, ReturnType<typeof edgeProbeVerdict>][] = [
  ['201 with the headers', { status: 201, limit: 30 }, 'accepted'],
  ['409 with the headers (the rate check passed)', { status: 409, limit: 30 }, 'accepted'],
  ['429', { status: 429, limit: 30 }, 'refused'],
  ['429 without headers', { status: 429 }, 'refused'],
  ['502 page without headers', { status: 502 }, 'unknown'],
  ['limit 0', { status: 200, limit: 0 }, 'unknown'],
  ['limit 2.5', { status: 200, limit: 2.5 }, 'unknown'],
  ['no answer', {}, 'unknown'],
];

export const ACCEPTED_ROWS: [number, number, number][] = [
  [7020, 13_041.5, 6022],
  [7020.4, 13_041, 6021],
  [0, 6000, 6000],
];
