/**
 * The glue the transport calls around each attempt: take a pacing slot from whichever
 * {@link RateLimiter} the client has (in-process or `RedisRateLimiter`), then report the
 * answer's rate-limit headers back to it.
 *
 * @module
 */
import { bucketOf, handClientWarn, type RateLimiter, type RateLimitObservation } from './limiter.js';
import type { Operation } from '../policy.js';
import { readRateLimit } from './rate-limit-headers.js';
import { parseRetryAfter } from '../retry.js';
import { callStoreBudget } from '../abortable.js';
import { DEFAULTS } from '../settings.js';

/** Reports the end of one attempt to the limiter: the answer's headers, or none. */
export type PaceReport = (response: Response | undefined) => void;

/** What the transport calls: one acquire before each attempt, one report after it. */
export class Pacer {
  readonly #limiter: RateLimiter;
  readonly #keyOf: () => Promise<string>;
  readonly #now: () => number;
  readonly #storeMs: number;
  #key: string | undefined;

  /**
   * `now`: the client's clock, the one the service's `X-RateLimit-Reset` is compared with.
   * `warn`: the client's warnings, handed to a limiter that has no logger of its own.
   * `storeMs`: the client's `tokenStoreTimeout`, the store budget of a call (see `callStoreBudget`).
   */
  constructor(limiter: RateLimiter, key: () => Promise<string>, now: () => number, warn?: (message: string) => void, storeMs: number = DEFAULTS.tokenStoreTimeout) {
    this.#limiter = limiter;
    this.#keyOf = key;
    this.#now = now;
    this.#storeMs = storeMs;
    if (warn) handClientWarn(limiter, warn);
  }

  /**
   * Takes a slot for an attempt of `operation`. The token endpoint is left to the token
   * limiter (src/core/tokens/shared.ts), whose rules differ: it refuses instead of waiting.
   * `call`: the call's signal, built only if the limiter asks a shared store: it finds the
   * call's store budget, which the token store may have spent already.
   */
  async acquire(operation: Operation, signal: AbortSignal | undefined, maxWaitMs: number, call?: () => AbortSignal): Promise<PaceReport | undefined> {
    if (operation === 'token') return undefined;
    const key = (this.#key ??= await this.#keyOf());
    const bucket = bucketOf(operation);
    const budget = () => callStoreBudget(call!(), this.#storeMs);
    const storeBudget = call && { leftMs: () => budget().leftMs, spend: (ms: number) => budget().charge(ms) };
    const slot = (await this.#limiter.acquire(key, bucket, { signal, maxWaitMs, storeBudget })) ?? undefined;
    const started = performance.now();
    return (response) => {
      const observation: RateLimitObservation = { elapsedMs: performance.now() - started };
      if (response) {
        const now = this.#now();
        const info = readRateLimit(response.headers, now);
        observation.status = response.status;
        observation.limit = info?.limit;
        observation.remaining = info?.remaining;
        observation.resetInMs = info?.reset === undefined ? undefined : info.reset * 1000 - now;
        observation.resetAt = info?.reset === undefined ? undefined : info.reset * 1000;
        observation.retryAfterMs = parseRetryAfter(response.headers.get('retry-after'), now);
      }
      try {
        this.#limiter.observe(key, bucket, observation, slot);
      } catch {
        // A merchant's limiter that fails to learn must not fail the call it paced.
      }
    };
  }
}
