/**
 * The glue the transport calls around each attempt: take a pacing slot from whichever
 * {@link RateLimiter} the client has (in-process or `RedisRateLimiter`), then report the
 * answer's rate-limit headers back to it.
 *
 * @module
 */
import { bucketOf, handClientWarn, type RateLimiter, type RateLimitObservation } from './limiter-contract.js';
import type { Operation } from '../call/retry-policy.js';
import type { AnswerTiming } from './rate-limit-headers.js';
import { callStoreBudget } from '../store-budget.js';
import { DEFAULTS } from '../settings.js';

/** An answer as the pacer learns from it: its status and its timing headers (read once, by the attempt). */
export interface PacedAnswer {
  status: number;
  timing: AnswerTiming;
}

/** Reports the end of one attempt to the limiter: the answer, or none. */
export type PaceReport = (answer: PacedAnswer | undefined) => void;

/** What the transport calls: one acquire before each attempt, one report after it. */
export class Pacer {
  readonly #limiter: RateLimiter;
  readonly #keyOf: () => Promise<string>;
  readonly #storeMs: number;
  #key: string | undefined;

  /**
   * `warn`: the client's warnings, handed to a limiter that has no logger of its own.
   * `storeMs`: the client's `tokenStoreTimeout`, the store budget of a call (see `callStoreBudget`).
   */
  constructor(
    limiter: RateLimiter,
    key: () => Promise<string>,
    warn?: (message: string) => void,
    storeMs: number = DEFAULTS.tokenStoreTimeout,
  ) {
    this.#limiter = limiter;
    this.#keyOf = key;
    this.#storeMs = storeMs;
    if (warn) handClientWarn(limiter, warn);
  }

  /**
   * Takes a slot for an attempt of `operation`. The token endpoint is left to the token
   * limiter (src/core/tokens/shared.ts), whose rules differ: it refuses instead of waiting.
   * `call`: the call's signal, built only if the limiter asks a shared store: it finds the
   * call's store budget, which the token store may have spent already. `mayBeRefused`: the
   * attempt can absorb a 429 (a retry is left), so it may be the edge probe.
   */
  async acquire(
    operation: Operation,
    signal: AbortSignal | undefined,
    maxWaitMs: number,
    call?: () => AbortSignal,
    mayBeRefused = true,
  ): Promise<PaceReport | undefined> {
    if (operation === 'token') return undefined;
    const key = (this.#key ??= await this.#keyOf());
    const bucket = bucketOf(operation);
    const budget = () => callStoreBudget(call!(), this.#storeMs);
    const storeBudget = call && { leftMs: () => budget().leftMs, spend: (ms: number) => budget().charge(ms) };
    const slot =
      (await this.#limiter.acquire(key, bucket, { signal, maxWaitMs, storeBudget, mayBeRefused })) ?? undefined;
    const started = performance.now();
    return (answer) => {
      const observation: RateLimitObservation = { elapsedMs: performance.now() - started };
      if (answer) {
        const { rateLimit, retryAfterMs, resetInMs, dateInMs } = answer.timing;
        observation.status = answer.status;
        observation.limit = rateLimit?.limit;
        observation.remaining = rateLimit?.remaining;
        observation.resetInMs = resetInMs;
        observation.resetAt = rateLimit?.reset === undefined ? undefined : rateLimit.reset * 1000;
        observation.retryAfterMs = retryAfterMs;
        observation.dateInMs = dateInMs;
      }
      try {
        this.#limiter.observe(key, bucket, observation, slot);
      } catch {
        // A merchant's limiter that fails to learn must not fail the call it paced.
      }
    };
  }
}
