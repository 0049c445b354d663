/**
 * The rows of the edge probe (src/core/pacing/edge-probe.ts), shared by its unit test and by the
 * test that runs the fleet's Lua over them (test/integration/redis-rate-edge-probe.test.ts).
 */
import {
  EDGE_PROBE_MIN_GAIN_MS,
  type EdgePlan,
  type EdgePlanInput,
  type edgeProbeVerdict,
} from '../../src/core/pacing/edge-probe.js';

/**
 * 30 per 6 s. The lone request was sent 300 ms into a second of the service's clock and answered
 * 10 ms later; the reset (7 s) lies 700 ms past its true edge, so the upper bound is 6,700 ms.
 */
function input(
  over: Partial<Omit<EdgePlanInput, 'lone'>> & { lone?: Partial<EdgePlanInput['lone']> } = {},
): EdgePlanInput {
  return {
    state: over.state ?? 'ready',
    windowMs: over.windowMs ?? 6700,
    lone: { sentAt: 300, answeredAt: 310, resetAt: 7000, ...over.lone },
  };
}

export const PLAN_ROWS: [string, EdgePlanInput, EdgePlan | undefined][] = [
  [
    'a lone answer 700 ms short of its reset: probe a whole-second window after the answer',
    input(),
    { at: 6310, until: 7010 },
  ],
  [
    'a slow answer within the same second: still a whole-second window after the answer',
    input({ lone: { answeredAt: 990 } }),
    { at: 6990, until: 7690 },
  ],
  [
    'the answer came in the next second (reset 6 s after it): the arrival second is unknown, no probe',
    input({ lone: { answeredAt: 1001 } }),
    undefined,
  ],
  ['the answer exactly on the whole second', input({ lone: { answeredAt: 1000 } }), { at: 7000, until: 7700 }],
  [
    'sent exactly on a whole second: it arrived in the next one, which reads as a second crossed: no probe',
    input({ windowMs: 7000, lone: { sentAt: 0 } }),
    undefined,
  ],
  [
    'the second lone request, sent just after the first rounded reset',
    input({ windowMs: 6720, lone: { sentAt: 7020, answeredAt: 7030, resetAt: 14_000 } }),
    { at: 13_030, until: 13_750 },
  ],
  [
    'a window of 6.5 s: the whole seconds say 6 s, the probe goes (and will be refused)',
    input({ windowMs: 6900, lone: { sentAt: 100, answeredAt: 110 } }),
    { at: 6110, until: 7010 },
  ],
  ['a probe already out', input({ state: 'out' }), undefined],
  ['a probe already answered', input({ state: 'done' }), undefined],
  ['gain below the minimum: no 429 risked for it', input({ windowMs: 6000 + EDGE_PROBE_MIN_GAIN_MS - 1 }), undefined],
  ['gain exactly the minimum', input({ windowMs: 6000 + EDGE_PROBE_MIN_GAIN_MS }), { at: 6310, until: 6410 }],
  [
    'a whole-second window longer than the window paced on',
    input({ windowMs: 6700, lone: { resetAt: 8000 } }),
    undefined,
  ],
  [
    'a whole-second window under the shortest believed (1 s)',
    input({ windowMs: 1700, lone: { resetAt: 1200 } }),
    undefined,
  ],
  ['the shortest believed window', input({ windowMs: 1700, lone: { resetAt: 2000 } }), { at: 1310, until: 2010 }],
  [
    'a clock found off (a Date given): the whole seconds from the second the answer was made in to the reset',
    input({ lone: { datedAt: 0 } }),
    { at: 6310, until: 7010 },
  ],
  [
    'a clock found off, counted late, out across a second (counted at 1,200, answered at 1,300, dated 1,000): the Date gives the window',
    input({ windowMs: 7700, lone: { answeredAt: 1300, resetAt: 8000, datedAt: 1000 } }),
    { at: 7300, until: 9000 },
  ],
  [
    'out across a second on a clock that agrees (no Date given): no probe',
    input({ windowMs: 7700, lone: { answeredAt: 1300, resetAt: 8000 } }),
    undefined,
  ],
  [
    "a process clock off by 700 ms more than it knows (the reset and the Date read that much late alike): the Date's window stands",
    input({ windowMs: 7400, lone: { resetAt: 7700, datedAt: 700 } }),
    { at: 6310, until: 7710 },
  ],
  [
    'the same, read as a clock that agrees (no Date given): the window a whole second too long, the probe a second late',
    input({ windowMs: 7400, lone: { resetAt: 7700 } }),
    { at: 7310, until: 7710 },
  ],
  [
    'a clock found off, counted in the second before its answer was made (counted at 900, dated 1,000): a second short, the probe goes and will be refused',
    input({ windowMs: 6700, lone: { answeredAt: 1150, resetAt: 7000, datedAt: 1000 } }),
    { at: 6150, until: 7850 },
  ],
  ['a clock found off, a Date at the reset: no probe', input({ lone: { datedAt: 7000 } }), undefined],
  ['a reset before the send', input({ lone: { resetAt: 200 } }), undefined],
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
