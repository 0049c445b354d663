/**
 * What a limiter believes of one bucket from the service's answers: its limit, its window (an
 * upper bound measured from an answer alone in its window), and a wait the service imposed.
 *
 * @module
 */
import {
  PUBLISHED_LIMITS,
  PUBLISHED_WINDOW_MS,
  type RateBucket,
  type RateLimitObservation,
  UNPACED_ABOVE,
} from './limiter-contract.js';

const HOUR_MS = 3_600_000;
/** The shortest window believed: anything shorter is a measurement gone wrong (or a wrong header). */
export const MIN_WINDOW_MS = 1000;
/** The longest window believed. */
export const MAX_WINDOW_MS = HOUR_MS;

/** What a limiter knows of one bucket: its limit and window, and a wait the service imposed. */
export class BucketModel {
  limit: number;
  windowMs = PUBLISHED_WINDOW_MS;
  /** No slot before this time (limiter clock): the service said its window is full. */
  blockedUntil = 0;
  /**
   * No slot before this time either while requests of this limiter are in flight: the service
   * said its window is full, and until they are answered the limiter cannot tell whether some of
   * them were counted before that answer (answers overtake each other) or another client of the
   * merchant fills the window (see {@link BucketModel.learn}).
   */
  doubtUntil = 0;
  /** The fewest `remaining` an answer reported while in doubt. */
  #doubtRemaining = Number.POSITIVE_INFINITY;
  #windowKnown = false;
  /** What the answers' dates allow of the service's clock minus this process's (ms). */
  #offsetLow = Number.NEGATIVE_INFINITY;
  #offsetHigh = Number.POSITIVE_INFINITY;

  constructor(readonly bucket: RateBucket) {
    this.limit = PUBLISHED_LIMITS[bucket];
  }

  /** Whether the window was measured from the service's headers (not the published 60 s assumed). */
  get windowKnown(): boolean {
    return this.#windowKnown;
  }

  get unpaced(): boolean {
    return this.limit > UNPACED_ABOVE;
  }

  /** Takes the answer's `X-RateLimit-Limit`, if it is one (a whole number above 0). */
  learnLimit(o: RateLimitObservation): void {
    if (o.limit !== undefined && Number.isInteger(o.limit) && o.limit > 0) this.limit = o.limit;
  }

  /**
   * Learns the service's clock against this process's from an answer's `Date`: dated (rounded
   * down to its second) after its request was sent and before it arrived, so the service's clock
   * minus ours lies between `dateInMs` and `dateInMs + 1 s + elapsedMs`. Each answer narrows the
   * range; one that contradicts it (a clock stepped) starts it anew.
   */
  learnClock(o: RateLimitObservation): void {
    const date = o.dateInMs;
    if (date === undefined || !(Math.abs(date) <= HOUR_MS)) return;
    const low = Math.max(this.#offsetLow, date);
    const high = Math.min(this.#offsetHigh, date + 1000 + o.elapsedMs);
    [this.#offsetLow, this.#offsetHigh] = low <= high ? [low, high] : [date, date + 1000 + o.elapsedMs];
  }

  /**
   * The service's clock minus this process's, as pacing takes it: 0 (the clocks agree,
   * assumption A24) unless the answers' dates rule that out, then the least the dates allow,
   * which never moves a reset earlier than the service's.
   */
  get clockOffset(): number {
    return this.#offsetLow > 0 || this.#offsetHigh < 0 ? this.#offsetLow : 0;
  }

  /** The answer's reset, in ms from its arrival on this process's clock, if believable (0 to 1 h). */
  resetIn(o: RateLimitObservation): number | undefined {
    const resetInMs = o.resetInMs === undefined ? undefined : o.resetInMs - this.clockOffset;
    return resetInMs !== undefined && resetInMs >= 0 && resetInMs <= HOUR_MS ? resetInMs : undefined;
  }

  /** Whether an answer (not a 429) was alone in its window: `Remaining = Limit − 1`, with a believable reset. */
  alone(o: RateLimitObservation): boolean {
    return o.status !== 429 && o.remaining === this.limit - 1 && this.resetIn(o) !== undefined;
  }

  /**
   * Takes `windowMs` as the window if it is an upper bound shorter than the one known (or none
   * is known). A measurement outside the believable range is dropped and leaves the window unknown.
   */
  narrowWindow(windowMs: number): void {
    if (windowMs >= MIN_WINDOW_MS && windowMs <= MAX_WINDOW_MS && (!this.#windowKnown || windowMs < this.windowMs)) {
      this.windowMs = windowMs;
      this.#windowKnown = true;
    }
  }

  /**
   * Learns from an answer. `inFlight`: other requests of this bucket sent and not answered
   * (they may not be counted in `remaining` yet). `counted`: requests of the current window the
   * limiter itself holds slots for (answered or in flight). Returns the slots the service says
   * are free beyond those, or undefined when it did not say.
   *
   * A window the service reports full holds the bucket until its reset, unless the limiter
   * already counts a full window of its own: its slots free a measured window after their
   * answers, which is never before the service's edge, while the reset the service reports is
   * rounded up to the next whole second (up to a second lost at every window edge). Reported full
   * while requests of its own are in flight, the bucket is in doubt instead (held until the reset
   * too, {@link BucketModel.doubtUntil}): once they are all answered, it is held on only if one of
   * the answers showed the service counting more requests than all of the limiter's own (another
   * client); otherwise those were its own, counted before the answer that said full.
   */
  learn(o: RateLimitObservation, now: number, inFlight: number, counted = 0): number | undefined {
    this.learnLimit(o);
    this.learnClock(o);
    const resetInMs = this.resetIn(o);
    if (o.status === 429) {
      this.#windowKnown = false; // the model was wrong: take the next measurement as it comes
      const wait = o.retryAfterMs ?? resetInMs ?? 1000;
      if (wait <= HOUR_MS) this.blockedUntil = Math.max(this.blockedUntil, now + wait);
      return undefined;
    }
    if (o.remaining === undefined || !Number.isInteger(o.remaining) || resetInMs === undefined) return undefined;
    // Alone in the window: the reset is when this very request leaves it, so the window is
    // (reset − send time). The reset is in whole seconds, so each measurement errs long, never
    // short: the shortest one seen is the closest.
    if (this.alone(o)) this.narrowWindow(Math.ceil(resetInMs + o.elapsedMs));
    const free = o.remaining - inFlight;
    // A doubt whose reset passed (its requests never answered with headers) holds nothing more.
    if (this.doubtUntil > 0 && this.doubtUntil <= now) this.#endDoubt();
    if (free <= 0 && counted < this.limit) this.doubtUntil = Math.max(this.doubtUntil, now + resetInMs);
    if (this.doubtUntil > 0) this.#doubtRemaining = Math.min(this.#doubtRemaining, o.remaining);
    // Every request of the doubt answered: held until the reset only if the service counted others.
    if (inFlight === 0 && this.doubtUntil > 0) {
      if (this.limit - this.#doubtRemaining > counted) this.blockedUntil = Math.max(this.blockedUntil, this.doubtUntil);
      this.#endDoubt();
    }
    return Math.max(0, free);
  }

  #endDoubt(): void {
    this.doubtUntil = 0;
    this.#doubtRemaining = Number.POSITIVE_INFINITY;
  }
}
