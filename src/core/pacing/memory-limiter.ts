/**
 * The in-process {@link RateLimiter}: the default, one budget per merchant per process.
 *
 * @module
 */
import { BucketModel } from './bucket-model.js';
import {
  type AcquireOptions,
  monotonicNow,
  pacingError,
  type RateBucket,
  type RateLimiter,
  type RateLimitObservation,
} from './limiter-contract.js';
import { WaitQueue } from './wait-queue.js';
import { admission, afterAnswer, type SlowStartState } from './slow-start.js';
import {
  EDGE_PROBE_SLOT,
  type EdgePlan,
  type EdgeProbeState,
  edgeProbeVerdict,
  planEdgeProbe,
  windowAfterAccepted,
} from './edge-probe.js';
import { unref } from '../wait.js';

/**
 * The longest a slot whose request was never reported (a limiter misused) is counted: as long
 * as `RedisRateLimiter` holds one in flight.
 */
const MAX_IN_FLIGHT_MS = 3_600_000;

class LocalBucket extends BucketModel implements SlowStartState {
  limitsSeen = false;
  probeOut = false;
  headerlessAnswers = 0;
  /**
   * When each answered request of the current window was answered, oldest first. The service
   * counted the request when it arrived, which was before its answer: a slot counted from the
   * answer leaves the window no earlier than the service's own, however slow the host, and no
   * margin is added on top (a margin for slow answers cost a loaded host most of a second per
   * window edge).
   */
  readonly log: number[] = [];
  /** When each request still in flight took its slot, oldest first: counted until answered. */
  readonly flying: number[] = [];
  readonly queue = new WaitQueue();
  timer: ReturnType<typeof setTimeout> | undefined;
  /** The edge probe (edge-probe.ts): its state, its plan, and when the lone request it tests took its slot. */
  edge: EdgeProbeState = 'ready';
  edgePlan: (EdgePlan & { from: number }) | undefined;

  get inFlight(): number {
    return this.flying.length;
  }

  /**
   * The earliest time a slot is free, given `ahead` calls served first. A slot in flight frees
   * a window after its answer at the earliest: `now` plus the window until it comes.
   */
  freeAt(now: number, ahead = 0): number {
    const { log, flying } = this;
    while (log.length > 0 && (log[0] as number) <= now - this.windowMs) log.shift();
    while (flying.length > 0 && (flying[0] as number) <= now - MAX_IN_FLIGHT_MS) flying.shift();
    const i = log.length + flying.length - this.limit + ahead;
    const fromLog = i < 0 ? now : i < log.length ? (log[i] as number) + this.windowMs : now + this.windowMs;
    return Math.max(now, this.blockedUntil, this.doubtUntil, fromLog);
  }

  /**
   * Whether a slot can be taken now: slow start allows it and the window has room, or the edge
   * probe may go and `probe` (the caller can absorb its 429).
   */
  open(now: number, probe = true): boolean {
    if (this.unpaced) return true;
    return admission(this) !== 'hold' && (this.freeAt(now) <= now || (probe && this.edgeAt(now) <= now));
  }

  /**
   * When the planned edge probe may go (Infinity when none): it takes the place of the lone
   * request's slot, so only while the window holds exactly the limit.
   */
  edgeAt(now: number): number {
    const plan = this.edgePlan;
    if (this.edge !== 'ready' || plan === undefined) return Number.POSITIVE_INFINITY;
    if (now >= plan.until) this.edgePlan = undefined;
    else if (Math.max(this.blockedUntil, this.doubtUntil) <= now && this.log.length + this.flying.length === this.limit)
      return Math.max(now, plan.at);
    return Number.POSITIVE_INFINITY;
  }

  /** Takes a slot; returns the edge probe's slot name when the window had no room but the probe may go. */
  take(now: number): string | undefined {
    // Until the service's limits are seen, the one request admitted is the probe (slow-start.ts).
    if (admission(this) === 'probe') this.probeOut = true;
    if (this.unpaced) return undefined;
    const edge = this.freeAt(now) > now && this.edgeAt(now) <= now;
    this.flying.push(now);
    if (!edge) return undefined;
    this.edge = 'out';
    return EDGE_PROBE_SLOT;
  }

  /**
   * The edge probe's answer (edge-probe.ts). Returns true when it was refused: the service did
   * not count it, so its slot is dropped, and the bucket is not held back by its 429.
   */
  edgeAnswered(now: number, observation: RateLimitObservation): boolean {
    const from = this.edgePlan?.from;
    this.edge = 'done';
    this.edgePlan = undefined;
    const verdict = edgeProbeVerdict(observation);
    if (verdict === 'accepted' && from !== undefined) this.narrowWindow(windowAfterAccepted(from, now));
    if (verdict !== 'refused') return false;
    this.learnLimit(observation);
    this.log.pop(); // this answer's, just logged
    return true;
  }

  /** After an answer alone in its window: the edge probe it allows, if any. */
  planEdge(now: number, observation: RateLimitObservation): void {
    const resetInMs = this.resetIn(observation);
    if (resetInMs === undefined || this.edge !== 'ready') return;
    // A clock the answers' dates show to be off reads the send's second through an offset known
    // only to a second: the answer's Date says the second the service counted it in instead.
    const { dateInMs } = observation;
    const datedAt = dateInMs === undefined || this.clockOffset === 0 ? undefined : now + dateInMs - this.clockOffset;
    const lone = { sentAt: now - observation.elapsedMs, answeredAt: now, resetAt: now + resetInMs, datedAt };
    const plan = this.windowKnown ? planEdgeProbe({ state: this.edge, windowMs: this.windowMs, lone }) : undefined;
    this.edgePlan = plan && { ...plan, from: lone.sentAt };
  }

  /** How many answers in the log came after `time` (the log is in order of answer). */
  answeredAfter(time: number): number {
    const { log } = this;
    let i = log.length;
    while (i > 0 && (log[i - 1] as number) > time) i--;
    return log.length - i;
  }

  /** One request was answered (or given up): its slot counts from now. */
  answered(now: number): void {
    if (this.flying.shift() !== undefined) this.log.push(now);
  }
}

/**
 * A {@link RateLimiter} in this process: a sliding window per merchant and bucket, first come
 * first served. From cold, a bucket sends one request and holds the others until its answer's
 * `X-RateLimit-*` headers say what the limits are (slow start, see `slow-start.ts`); before any
 * answer it assumes the published limits (5 token, 100 payment, 50 withdraw, 100 other
 * requests a minute) and follows the service's `X-RateLimit-*` headers: their limit, the window
 * length they reveal, a window the service reports full (wait for its reset) or freer than
 * counted here. Clients given no `rateLimiter` share one instance.
 *
 * @example
 * ```ts
 * // A budget of this client's own instead of the process-wide one
 * const gateway = new MyrGateway({ baseUrl, merchantId, apiKey, rateLimiter: new MemoryRateLimiter() });
 * ```
 */
export class MemoryRateLimiter implements RateLimiter {
  /** By merchant key, then bucket: the key string is the same one on every call, so the Map reuses its hash (a joined id would be built and hashed anew). */
  readonly #buckets = new Map<string, Partial<Record<RateBucket, LocalBucket>>>();
  readonly #now: () => number;

  /** `now`: a monotonic clock in ms (tests). */
  constructor(options: { now?: () => number } = {}) {
    this.#now = options.now ?? monotonicNow;
  }

  #bucket(key: string, bucket: RateBucket): LocalBucket {
    let ofKey = this.#buckets.get(key);
    if (!ofKey) this.#buckets.set(key, (ofKey = {}));
    return (ofKey[bucket] ??= new LocalBucket(bucket));
  }

  /**
   * Resolves once a slot is taken: to nothing, or to the edge probe's slot name (to hand back to
   * {@link MemoryRateLimiter.observe} with its answer, as the client does).
   */
  acquire(key: string, bucket: RateBucket, options: AcquireOptions): Promise<string | void> {
    const b = this.#bucket(key, bucket);
    const now = this.#now();
    if (b.queue.length === 0 && b.open(now, options.mayBeRefused ?? true)) return Promise.resolve(b.take(now));
    // A call that cannot be served before its deadline, even if nothing else changes, fails now.
    const earliest = b.freeAt(now, b.queue.length);
    if (Number.isFinite(earliest) && earliest - now > options.maxWaitMs)
      return Promise.reject(pacingError(bucket, b.limit, b.windowMs, earliest - now));
    const waiting = b.queue.add(options, now, () =>
      pacingError(bucket, b.limit, b.windowMs, b.freeAt(this.#now()) - this.#now()),
    );
    this.#pump(b);
    return waiting;
  }

  /** Learns from the answer to a request that took a slot; `slot`: what `acquire` resolved to. */
  observe(key: string, bucket: RateBucket, observation: RateLimitObservation, slot?: string): void {
    const b = this.#bucket(key, bucket);
    const now = this.#now();
    const answeredSince = b.answeredAfter(now - observation.elapsedMs);
    b.answered(now);
    afterAnswer(b, observation);
    // A refused edge probe was expected to be possible: pacing goes on with the window it measured.
    if (slot === EDGE_PROBE_SLOT && b.edge === 'out' && b.edgeAnswered(now, observation)) {
      if (b.queue.length > 0) this.#pump(b);
      return;
    }
    b.freeAt(now); // forgets the slots out of the window, so the count below is the window's
    const free = b.learn(observation, now, b.inFlight, b.log.length + b.inFlight);
    // The service counts fewer of our requests than the log does (a shorter window, a reset
    // server): forget the oldest entries it no longer counts. Not those of answers that came
    // while this request was out: the service may have counted them after it (answers overtake
    // each other), so its `remaining` does not show them yet.
    if (free !== undefined) {
      b.freeAt(now);
      const excess = b.log.length - (b.limit - Math.max(0, free - answeredSince));
      if (excess > 0) b.log.splice(0, excess);
    }
    if (b.alone(observation)) b.planEdge(now, observation);
    if (b.queue.length > 0) this.#pump(b);
  }

  #pump(b: LocalBucket): void {
    clearTimeout(b.timer);
    b.timer = undefined;
    const now = this.#now();
    // The edge probe may be refused: it goes to the longest-waiting call that can absorb a 429, or to none.
    for (let waiter = b.queue.first(); waiter; waiter = b.queue.first()) {
      const to = b.open(now, false) ? waiter : b.open(now) ? b.queue.firstThatMayBeRefused() : undefined;
      if (!to) break;
      to.grant(b.take(now));
    }
    // Held for a probe: its answer (observe) pumps again; no timer could know when.
    if (b.queue.length === 0 || admission(b) === 'hold') return;
    const at = Math.min(b.freeAt(now), b.queue.firstThatMayBeRefused() ? b.edgeAt(now) : Number.POSITIVE_INFINITY);
    if (!Number.isFinite(at)) return;
    // Every waiter's own deadline timer keeps the process alive while it waits; the pump must
    // not do so after the last waiter gave up (its blocked time can be an hour). A scheduled
    // pump, not a wait: nobody awaits it, so it is no within().
    b.timer = unref(setTimeout(() => this.#pump(b), Math.max(1, Math.ceil(at - now))));
  }

  /** @internal */
  [Symbol.for('nodejs.util.inspect.custom')](): string {
    let buckets = 0;
    for (const ofKey of this.#buckets.values()) buckets += Object.keys(ofKey).length;
    return `MemoryRateLimiter { buckets: ${buckets} }`;
  }
}

let shared: MemoryRateLimiter | undefined;
/**
 * The process-wide limiter of clients given no `rateLimiter`: one budget per merchant (and base
 * URL) in this process, whatever clock each client was given. Its clock is the process's
 * monotonic one: a client's `now` is wall-clock time for tokens and headers, and a budget keyed
 * by it would split one merchant's budget between clients given equal but distinct functions.
 */
export function defaultRateLimiter(): MemoryRateLimiter {
  return (shared ??= new MemoryRateLimiter());
}
