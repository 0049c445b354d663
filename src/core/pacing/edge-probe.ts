/**
 * The edge probe: one early request per bucket that tests where the service's window edge lies,
 * instead of pacing a whole second past it.
 *
 * The service reports `X-RateLimit-Reset` in whole seconds, so a window measured from an answer
 * alone in its window (reset − send time) is an upper bound up to a second long, and a cold
 * burst paced on it reaches each next window up to a second late. Once the first window's edge
 * has been paced on that rounded reset, the next window's lone first request was sent just after
 * a whole second: its own reset, one second less, is then a lower bound of its edge within a round
 * trip of the truth. If the window is a whole number of seconds (the spec's is a minute), the
 * distance between the two lone requests' resets, one second less, is the window itself, and
 * the edge of the lone request's window lies at most that window after its answer.
 *
 * So, after such a second lone answer ({@link planEdgeProbe}), the limiter sends one request at its
 * answer plus that whole-second window, before the upper bound would free a slot: accepted, it
 * proves the lone request has left the window, so the window is at most from the lone request's
 * send to the probe's answer ({@link windowAfterAccepted}: within a round trip or two); refused,
 * it is one 429 (not counted by the service, so its slot is dropped and the bucket is not held
 * back), and pacing goes on with the measured upper bound. The probe's request is any paced call
 * waiting for a slot; a 429 moved no money, and its call is retried after `Retry-After` as any 429
 * (src/core/policy.ts). At most one probe per bucket: `done` after its answer, whatever it was.
 *
 * A pure decision: `MemoryRateLimiter` applies it per process, and `RedisRateLimiter`'s scripts
 * apply the same rows for a fleet (src/redis/rate-edge-probe.ts, which
 * test/integration/redis-rate-edge-probe.test.ts holds equal to this).
 * test/unit/core/pacing/edge-probe.test.ts lists every row.
 *
 * @module
 */
import { MIN_WINDOW_MS } from './limiter.js';

/** The grain of `X-RateLimit-Reset`: whole seconds. */
export const RESET_GRAIN_MS = 1000;
/**
 * A probe must be worth its risk of a 429: it goes only when it would reach the next window at
 * least this much earlier than the upper bound lets a slot free.
 */
export const EDGE_PROBE_MIN_GAIN_MS = 100;
/** The name of the slot `MemoryRateLimiter` hands out for its edge probe (handed back to `observe`). */
export const EDGE_PROBE_SLOT = 'edge-probe';

/**
 * - `ready`: no probe sent yet (one may be planned);
 * - `out`: the probe was sent, its answer has not come;
 * - `done`: the probe was answered (or lost): no more for this bucket.
 */
export type EdgeProbeState = 'ready' | 'out' | 'done';

/** An answer that was alone in its window (`Remaining = Limit − 1`), on one clock in ms. */
export interface LoneAnswer {
  /** When its slot was taken (before it was sent). */
  sentAt: number;
  /** When its answer came. */
  answeredAt: number;
  /** Its `X-RateLimit-Reset`, on the same clock. */
  resetAt: number;
}

/** What {@link planEdgeProbe} decides on. */
export interface EdgePlanInput {
  state: EdgeProbeState;
  /** The window paced on: the shortest measured so far, an upper bound. */
  windowMs: number;
  /** The answer alone in its window just received. */
  lone: LoneAnswer;
  /** The reset of the answer alone in its window before it (same clock), if any. */
  previousResetAt: number | undefined;
}

/** A planned probe: it may go from `at`, and is void from `until` (the upper bound frees a slot then anyway). */
export interface EdgePlan {
  at: number;
  until: number;
}

/**
 * When to send the edge probe after an answer alone in its window, or undefined for none: the
 * bucket has not probed yet, the previous lone answer's reset is known and this request was sent
 * after it (its window began on that reset's rounding), the whole-second window they give is
 * believable, and the probe would gain at least {@link EDGE_PROBE_MIN_GAIN_MS} over the upper bound.
 *
 * @example
 * ```ts
 * // 30 per 6 s; the first reset was 700 ms past the true edge, so the upper bound is 6.72 s
 * planEdgeProbe({ state: 'ready', windowMs: 6720, previousResetAt: 7000, lone: { sentAt: 7020, answeredAt: 7030, resetAt: 14_000 } });
 * // { at: 13_030, until: 13_750 }
 * ```
 */
export function planEdgeProbe(input: EdgePlanInput): EdgePlan | undefined {
  const { state, windowMs, lone, previousResetAt } = input;
  if (state !== 'ready' || previousResetAt === undefined) return undefined;
  if (!(lone.sentAt >= previousResetAt)) return undefined;
  const wholeSeconds = lone.resetAt - RESET_GRAIN_MS - previousResetAt;
  if (!(wholeSeconds >= MIN_WINDOW_MS && wholeSeconds <= windowMs - EDGE_PROBE_MIN_GAIN_MS)) return undefined;
  return { at: lone.answeredAt + wholeSeconds, until: lone.answeredAt + windowMs };
}

/**
 * What the probe's answer says: `refused` (a 429), `accepted` (the service answered it with its
 * rate-limit headers: it passed the rate check), else `unknown` (no answer, or a page without the
 * headers: nothing learned).
 *
 * @example
 * ```ts
 * edgeProbeVerdict({ status: 201, limit: 30 }); // 'accepted'
 * ```
 */
export function edgeProbeVerdict(answer: { status?: number | undefined; limit?: number | undefined }): 'accepted' | 'refused' | 'unknown' {
  if (answer.status === 429) return 'refused';
  const { limit } = answer;
  return answer.status !== undefined && limit !== undefined && Number.isInteger(limit) && limit >= 1 ? 'accepted' : 'unknown';
}

/**
 * The window an accepted probe proves: the lone request left the window before the probe
 * arrived, so the window is at most from the lone request's slot to the probe's answer.
 *
 * @example
 * ```ts
 * windowAfterAccepted(7020, 13_041.5); // 6022
 * ```
 */
export function windowAfterAccepted(loneSentAt: number, probeAnsweredAt: number): number {
  return Math.ceil(probeAnsweredAt - loneSentAt);
}
