/**
 * What bounds one call: the per-call option checks, the caller's signal and the overall deadline.
 *
 * @module
 */
import { InvalidRequestError } from './errors.js';

/** Longest delay a timer can take (2^31 - 1 ms, about 24.8 days). */
export const MAX_TIMER_MS = 2_147_483_647;

/** A per-call millisecond option: a positive integer a timer can hold, or the default. */
export function checkMs(value: number | undefined, fallback: number, field: string): number {
  if (value === undefined) return fallback;
  if (!Number.isInteger(value) || value <= 0 || value > MAX_TIMER_MS) {
    throw new InvalidRequestError(`VALIDATION_ERROR: ${field} must be a whole number of milliseconds from 1 to ${MAX_TIMER_MS}`, {
      code: 'VALIDATION_ERROR',
      field,
    });
  }
  return value;
}

export function checkCount(value: number | undefined, fallback: number, field: string): number {
  if (value === undefined) return fallback;
  if (!Number.isInteger(value) || value < 0 || value > 10) {
    throw new InvalidRequestError(`VALIDATION_ERROR: ${field} must be a whole number from 0 to 10`, { code: 'VALIDATION_ERROR', field });
  }
  return value;
}

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

/** Walks a cause chain for the first system error code (ECONNREFUSED, UND_ERR_SOCKET, …). */
export function systemCodeOf(error: unknown): string | undefined {
  let current: unknown = error;
  for (let depth = 0; depth < 6 && current !== null && typeof current === 'object'; depth++) {
    const code = (current as { code?: unknown }).code;
    if (typeof code === 'string') return code;
    current = (current as { cause?: unknown }).cause;
  }
  return undefined;
}

