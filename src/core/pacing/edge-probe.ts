/**
 * The edge probe: one early request per bucket that tests where the service's window edge lies,
 * instead of pacing up to a whole second past it.
 *
 * The service reports `X-RateLimit-Reset` in whole seconds, so a window measured from an answer
 * alone in its window (reset − send time) is an upper bound up to a second long (more when the
 * service counts late or the process's clock is off), and a cold burst paced on it reaches each
 * next window that much late. The reset is the lone request's count plus the window, rounded up
 * to the service's next whole second. If the window is a whole number of seconds (the spec's is a
 * minute), it is the whole seconds from the second the request was counted in to the reset.
 * Which second that was:
 * - on a clock that agrees with the service's: known when no whole second of the service's clock
 *   passed while the request was out (sent and answered in the same second, counted back from
 *   the reset). A request out across a second (a slow answer, a late count) plans no probe: its
 *   answer's `Date` could say the second, but a service that counts on arrival and answers later
 *   (a payment's work between the two) would then often be probed a second early;
 * - on a process clock the answers' dates show to be off (bucket-model.ts, `learnClock`), which
 *   reads the send's second through an offset known only to the second: its answer's `Date`, the
 *   second the service made the answer in, just after it counted the request. The reset and the
 *   Date are both the service's clock, so the offset cancels. A count in the second before its
 *   answer's makes the window a second short: the probe is then refused, the one 429 it may be.
 *   The fleet's clock (Redis's) is taken to agree: its Lua has the first rule only.
 *
 * The request leaves the window at most that long after its answer. So, after such a lone answer
 * ({@link planEdgeProbe}), the limiter sends one request at its answer plus that whole-second
 * window, before the upper bound would free a slot: accepted, it proves the lone request has left
 * the window, so the window is at most from the lone request's send to the probe's answer
 * ({@link windowAfterAccepted}: within a round trip or two); refused (the window is not whole
 * seconds), it is one 429, not counted by the service, so its slot is dropped and the bucket is
 * not held back, and pacing goes on with the measured upper bound. In a cold burst the first
 * window's lone request (slow start's) plans it; if it cannot (a second passed while it was out,
 * or too little to gain), the next window's lone request may (it is sent just after the first
 * window's rounded reset). The probe's request is the longest-waiting paced call that can absorb a
 * 429 (a retry left: `AcquireOptions.mayBeRefused`), or none; a 429 moved no money, and its call
 * is retried after `Retry-After` as any 429 (src/core/call/retry-policy.ts). At most
 * one probe per bucket: `done` after its answer, whatever it was.
 *
 * A pure decision: `MemoryRateLimiter` applies it per process, and `RedisRateLimiter`'s scripts
 * apply the same rows for a fleet (src/redis/rate-edge-probe.ts, which
 * test/integration/redis-rate-edge-probe.test.ts holds equal to this).
 * test/unit/core/pacing/edge-probe.test.ts lists every row.
 *
 * @module
 */
import { MIN_WINDOW_MS } from './bucket-model.js';

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
  /**
   * Its `Date` (the whole second the service made it in), on the same clock: given when the
   * process's clock is known to be off from the service's, so the send's second is not to be read.
   */
  datedAt?: number | undefined;
}

/** What {@link planEdgeProbe} decides on. */
export interface EdgePlanInput {
  state: EdgeProbeState;
  /** The window paced on: the shortest measured so far, an upper bound. */
  windowMs: number;
  /** The answer alone in its window just received. */
  lone: LoneAnswer;
}

/** A planned probe: it may go from `at`, and is void from `until` (the upper bound frees a slot then anyway). */
export interface EdgePlan {
  at: number;
  until: number;
}

/**
 * When to send the edge probe after an answer alone in its window, or undefined for none: the
 * bucket has not probed yet, the second the request was counted in is known (its answer's `Date`
 * when given, else a send and answer within one second), the whole-second window that gives is believable, and
 * the probe would gain at least {@link EDGE_PROBE_MIN_GAIN_MS} over the upper bound.
 *
 * @example
 * ```ts
 * // 30 per 6 s; sent 300 ms into a second, so the reset lies 700 ms past the true edge and the
 * // upper bound is 6.7 s; a whole-second window is 6 s
 * planEdgeProbe({ state: 'ready', windowMs: 6700, lone: { sentAt: 300, answeredAt: 310, resetAt: 7000 } });
 * // { at: 6310, until: 7010 }
 * // A process clock found off: the reset and the Date read 700 ms late alike; the Date gives the second
 * planEdgeProbe({ state: 'ready', windowMs: 7400, lone: { sentAt: 300, answeredAt: 310, resetAt: 7700, datedAt: 700 } });
 * // { at: 6310, until: 7710 }
 * ```
 */
export function planEdgeProbe(input: EdgePlanInput): EdgePlan | undefined {
  const { state, windowMs, lone } = input;
  if (state !== 'ready') return undefined;
  const { datedAt, resetAt } = lone;
  const wholeSeconds =
    RESET_GRAIN_MS *
    (datedAt === undefined ? secondsWhenSentAndAnswered(lone) : Math.round((resetAt - datedAt) / RESET_GRAIN_MS) - 1);
  if (!(wholeSeconds >= MIN_WINDOW_MS && wholeSeconds <= windowMs - EDGE_PROBE_MIN_GAIN_MS)) return undefined;
  return { at: lone.answeredAt + wholeSeconds, until: lone.answeredAt + windowMs };
}

/** On a clock that agrees (no `Date` given): the whole seconds from the send to the reset, if none passed while the request was out (else NaN). */
function secondsWhenSentAndAnswered(lone: LoneAnswer): number {
  const fromSend = Math.floor((lone.resetAt - lone.sentAt) / RESET_GRAIN_MS);
  return fromSend === Math.floor((lone.resetAt - lone.answeredAt) / RESET_GRAIN_MS) ? fromSend : Number.NaN;
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
export function edgeProbeVerdict(answer: {
  status?: number | undefined;
  limit?: number | undefined;
}): 'accepted' | 'refused' | 'unknown' {
  if (answer.status === 429) return 'refused';
  const { limit } = answer;
  return answer.status !== undefined && limit !== undefined && Number.isInteger(limit) && limit >= 1
    ? 'accepted'
    : 'unknown';
}

/**
 * The window an accepted probe proves: the lone request left the window before the probe
 * arrived, so the window is at most from the lone request's slot to the probe's answer.
 *
 * @example
 * ```ts
 * windowAfterAccepted(300, 6321.5); // 6022
 * ```
 */
export function windowAfterAccepted(loneSentAt: number, probeAnsweredAt: number): number {
  return Math.ceil(probeAnsweredAt - loneSentAt);
}
