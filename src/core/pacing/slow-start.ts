/**
 * Slow start: until the service has said what a bucket's limits are, a limiter admits one
 * request (the probe) and holds the rest until its answer's `X-RateLimit-*` headers arrive. The
 * published limits are only the service's defaults: a merchant's real limit may be lower, and a
 * cold burst paced to the published 100 a minute against 30 per 6 s is a storm of 429s. One probe
 * costs a round trip; then the burst is paced to what the headers said.
 *
 * A pure decision: `MemoryRateLimiter` applies it per process; `RedisRateLimiter`'s acquire
 * script applies the same rows for the whole fleet (src/redis/rate-limiter.ts).
 * test/unit/core/pacing/slow-start.test.ts lists every row.
 *
 * @module
 */
import type { RateLimitObservation } from './limiter-contract.js';

/** What a limiter knows of a bucket before admitting a request to it. */
export interface SlowStartState {
  /** An answer carried the service's `X-RateLimit-Limit` (in this process, or for the fleet). */
  limitsSeen: boolean;
  /** A probe was admitted and its answer has not come yet. */
  probeOut: boolean;
  /** Answers that came without the rate-limit headers (a proxy's page, a service that omits them). */
  headerlessAnswers: number;
}

/**
 * After this many answers without rate-limit headers, the bucket stops probing and paces to the
 * published limits: there is nothing to learn, and one request at a time would be all it sends.
 */
export const MAX_HEADERLESS_ANSWERS = 3;

/**
 * - `pace`: admit as the learned (or published) limits allow;
 * - `probe`: admit this one request alone, and hold the others until its answer;
 * - `hold`: wait for the probe's answer (or its failure).
 */
export type Admission = 'pace' | 'probe' | 'hold';

/**
 * Whether a request may go now, as far as slow start is concerned (the window must still have room).
 *
 * @example
 * ```ts
 * admission({ limitsSeen: false, probeOut: false, headerlessAnswers: 0 }); // 'probe'
 * admission({ limitsSeen: false, probeOut: true, headerlessAnswers: 0 }); // 'hold'
 * ```
 */
export function admission(state: SlowStartState): Admission {
  if (state.limitsSeen) return 'pace';
  if (state.headerlessAnswers >= MAX_HEADERLESS_ANSWERS) return 'pace';
  return state.probeOut ? 'hold' : 'probe';
}

/**
 * What one answer taught slow start:
 * - `limits-seen`: it carried a usable `X-RateLimit-Limit` (a 429 too): pace from now on;
 * - `headerless`: an answer without it: counts toward {@link MAX_HEADERLESS_ANSWERS}, next probe;
 * - `no-answer`: a timeout or a connection failure: the next probe goes, nothing counted (a
 *   service that was down is no reason to burst once it is back).
 *
 * @example
 * ```ts
 * probeOutcome({ status: 200, limit: 30, remaining: 29, resetInMs: 6000, elapsedMs: 12 }); // 'limits-seen'
 * ```
 */
export function probeOutcome(observation: RateLimitObservation): 'limits-seen' | 'headerless' | 'no-answer' {
  if (observation.status === undefined) return 'no-answer';
  const { limit } = observation;
  return limit !== undefined && Number.isInteger(limit) && limit > 0 ? 'limits-seen' : 'headerless';
}

/** Applies an answer to `state` (a probe's or any other: a seen limit ends slow start either way). */
export function afterAnswer(state: SlowStartState, observation: RateLimitObservation): void {
  const outcome = probeOutcome(observation);
  if (outcome === 'limits-seen') state.limitsSeen = true;
  else if (outcome === 'headerless') state.headerlessAnswers += 1;
  state.probeOut = false;
}
