/**
 * What bounds one call: the caller's signal and the overall deadline.
 *
 * @module
 */

/**
 * What stops a call: the caller's signal and the overall deadline, in real time
 * (performance.now, unaffected by an injected clock or wall-clock jumps).
 */
export class CallLimits {
  readonly user: AbortSignal | undefined;
  readonly #endsAt: number;
  #signal: AbortSignal | undefined;

  constructor(user: AbortSignal | undefined, totalMs: number) {
    this.user = user;
    this.#endsAt = performance.now() + totalMs;
  }

  /** Milliseconds left before the overall deadline. */
  remaining(): number {
    return this.#endsAt - performance.now();
  }

  get expired(): boolean {
    // The deadline timer can fire a fraction of a millisecond before performance.now() passes it.
    return this.remaining() <= 0 || (this.#signal?.aborted === true && this.user?.aborted !== true);
  }

  get stopped(): boolean {
    return this.user?.aborted === true || this.expired;
  }

  /** One signal for the slow paths (token refresh, backoff waits), built on first use. */
  get signal(): AbortSignal {
    if (!this.#signal) {
      const deadline = AbortSignal.timeout(Math.max(1, Math.ceil(this.remaining())));
      this.#signal = this.user ? AbortSignal.any([this.user, deadline]) : deadline;
    }
    return this.#signal;
  }
}
