/** Every row of slow start (src/core/pacing/slow-start.ts): what a bucket admits, and what an answer teaches. */
import { describe, expect, it } from 'vitest';
import type { RateLimitObservation } from '../../../../src/core/pacing/limiter-contract.js';
import {
  type Admission,
  admission,
  afterAnswer,
  MAX_HEADERLESS_ANSWERS,
  probeOutcome,
  type SlowStartState,
} from '../../../../src/core/pacing/slow-start.js';

// limitsSeen, probeOut, headerlessAnswers → admission
const ADMISSION: [boolean, boolean, number, Admission][] = [
  [false, false, 0, 'probe'],
  [false, true, 0, 'hold'],
  [false, false, 2, 'probe'],
  [false, true, 2, 'hold'],
  [false, false, MAX_HEADERLESS_ANSWERS, 'pace'],
  [false, true, MAX_HEADERLESS_ANSWERS, 'pace'],
  [true, false, 0, 'pace'],
  [true, true, 0, 'pace'],
  [true, false, MAX_HEADERLESS_ANSWERS, 'pace'],
];

describe('admission', () => {
  it.each(ADMISSION)(
    'limits seen %s, probe out %s, %i headerless answers → %s',
    (limitsSeen, probeOut, headerlessAnswers, expected) => {
      expect(admission({ limitsSeen, probeOut, headerlessAnswers })).toBe(expected);
    },
  );
});

const answer = (o: Omit<RateLimitObservation, 'elapsedMs'>): RateLimitObservation => ({ elapsedMs: 20, ...o });
// observation → outcome, and the state after it from { unseen, probe out, 0 headerless }
const OUTCOMES: [string, RateLimitObservation, ReturnType<typeof probeOutcome>, SlowStartState][] = [
  [
    '200 with all three headers',
    answer({ status: 200, limit: 30, remaining: 29, resetInMs: 6000 }),
    'limits-seen',
    { limitsSeen: true, probeOut: false, headerlessAnswers: 0 },
  ],
  [
    '200 with X-RateLimit-Limit only',
    answer({ status: 200, limit: 30 }),
    'limits-seen',
    { limitsSeen: true, probeOut: false, headerlessAnswers: 0 },
  ],
  [
    '429 with the headers and Retry-After',
    answer({ status: 429, limit: 30, remaining: 0, resetInMs: 4000, retryAfterMs: 4000 }),
    'limits-seen',
    { limitsSeen: true, probeOut: false, headerlessAnswers: 0 },
  ],
  [
    '429 with Retry-After only',
    answer({ status: 429, retryAfterMs: 4000 }),
    'headerless',
    { limitsSeen: false, probeOut: false, headerlessAnswers: 1 },
  ],
  [
    '502 page without headers',
    answer({ status: 502 }),
    'headerless',
    { limitsSeen: false, probeOut: false, headerlessAnswers: 1 },
  ],
  [
    'limit 0',
    answer({ status: 200, limit: 0 }),
    'headerless',
    { limitsSeen: false, probeOut: false, headerlessAnswers: 1 },
  ],
  [
    'limit 2.5',
    answer({ status: 200, limit: 2.5 }),
    'headerless',
    { limitsSeen: false, probeOut: false, headerlessAnswers: 1 },
  ],
  ['timeout (no answer)', answer({}), 'no-answer', { limitsSeen: false, probeOut: false, headerlessAnswers: 0 }],
];

describe('what an answer teaches', () => {
  it.each(OUTCOMES)('%s → %s', (_what, observation, outcome, after) => {
    expect(probeOutcome(observation)).toBe(outcome);
    const state: SlowStartState = { limitsSeen: false, probeOut: true, headerlessAnswers: 0 };
    afterAnswer(state, observation);
    expect(state).toEqual(after);
  });
});
