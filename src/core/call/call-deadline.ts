/**
 * What bounds one call: the caller's signal and the overall deadline.
 *
 * @module
 */

/**
 * What stops a call: the caller's signal and the overall deadline, in real time
 * (performance.now, unaffected by an injected clock or wall-clock jumps).
 */
export class CallDeadline {
  declare readonly user: AbortSignal | undefined;
  readonly #endsAt: number;
  #signal: AbortSignal | undefined;
  #spent = false;

  constructor(user: AbortSignal | undefined, totalMs: number) {
    this.user = user;
    this.#endsAt = performance.now() + totalMs;
  }

  /** Milliseconds left before the overall deadline. */
  remaining(): number {
    return this.#endsAt - performance.now();
  }

  get expired(): boolean {
    // A deadline timer (this one's, or ky's total timeout) can fire before performance.now()
    // passes it: the loop's cached clock it is armed on may lag behind.
    return this.#spent || this.remaining() <= 0 || (this.#signal?.aborted === true && this.user?.aborted !== true);
  }

  /** ky's total timeout, armed on this deadline, has fired: the call's time is spent. */
  spent(): void {
    this.#spent = true;
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
