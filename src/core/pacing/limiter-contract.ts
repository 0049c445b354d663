/**
 * The pacing contract: what a {@link RateLimiter} must do, which endpoint group (bucket) a
 * request counts in, the spec's published limits, and the error of a call that found no slot.
 * The client keeps its own requests inside the service's rate limits instead of provoking 429s:
 * a limiter hands out slots of a sliding window per merchant and bucket, starting from the
 * published limits and following what the service's `X-RateLimit-*` headers say. Waiting for a
 * slot happens before a request is sent, so it is never a retry and never moves money twice.
 *
 * @module
 */
import { RateLimitError } from '../errors/service.js';
import type { Operation } from '../call/retry-policy.js';

/** Endpoint groups the service limits separately. */
export type RateBucket = 'token' | 'payment' | 'withdraw' | 'other';

/** The spec's limits per sliding minute, per merchant. */
export const PUBLISHED_LIMITS: Readonly<Record<RateBucket, number>> = Object.freeze({
  token: 5,
  payment: 100,
  withdraw: 50,
  other: 100,
});
/** The spec's window. */
export const PUBLISHED_WINDOW_MS = 60_000;
/** Above this many requests per window a bucket is not paced (nothing to protect, and no log to keep). */
export const UNPACED_ABOVE = 10_000;

/** Which bucket an operation's requests count in. */
export function bucketOf(operation: Operation): RateBucket {
  if (operation === 'token') return 'token';
  if (operation === 'payment.create') return 'payment';
  if (operation === 'withdraw' || operation === 'withdraw.recover') return 'withdraw';
  return 'other';
}

/** What one attempt met, as a limiter learns from it. */
export interface RateLimitObservation {
  /** HTTP status of the answer; undefined when none came (timeout, connection failure). */
  status?: number | undefined;
  /** `X-RateLimit-Limit`. */
  limit?: number | undefined;
  /** `X-RateLimit-Remaining`. */
  remaining?: number | undefined;
  /** Milliseconds from the answer until `X-RateLimit-Reset` (on the service's clock). */
  resetInMs?: number | undefined;
  /**
   * `X-RateLimit-Reset` itself, in Unix milliseconds (the service's clock). A limiter with a
   * clock of its own to trust (Redis's `TIME`) measures against this rather than `resetInMs`,
   * which depends on the sending process's clock.
   */
  resetAt?: number | undefined;
  /** `Retry-After` of a 429, in milliseconds. */
  retryAfterMs?: number | undefined;
  /**
   * The answer's `Date` header (the service's clock, whole seconds) minus this process's clock
   * when the answer was read, in milliseconds: how a limiter tells a process clock that
   * disagrees with the service's (then `resetInMs` is off by as much).
   */
  dateInMs?: number | undefined;
  /** Milliseconds between taking the slot and the answer. */
  elapsedMs: number;
}

/** How long {@link RateLimiter.acquire} may wait. */
export interface AcquireOptions {
  /** The caller's signal: an abort ends the wait with its reason. */
  signal?: AbortSignal | undefined;
  /** Milliseconds left of the call; no slot in that time ends the wait with a {@link RateLimitError}. */
  maxWaitMs: number;
  /**
   * The call's store budget (`tokenStoreTimeout`, shared with the token store): `leftMs()` is
   * read when a limiter on a shared store is about to ask it, and the time it then waits on the
   * store is given to `spend`. A limiter that cannot get an answer within what is left paces
   * this call in-process instead, so one call never waits on stores for more than one budget.
   * Absent: the limiter's own timeout bounds its store.
   *
   * @example
   * ```ts
   * let left = 1000;
   * await limiter.acquire(key, 'payment', { maxWaitMs: 30_000, storeBudget: { leftMs: () => left, spend: (ms) => (left -= ms) } });
   * ```
   */
  /**
   * Whether the call can absorb a 429 (a retry is left to it): only such a call is given a slot
   * that may be refused, the edge probe (src/core/pacing/edge-probe.ts). The client passes false
   * for a call's last attempt (`maxRetries: 0`, or its retries spent).
   * @default true
   * @example await limiter.acquire(key, 'payment', { maxWaitMs: 30_000, mayBeRefused: false })
   */
  mayBeRefused?: boolean | undefined;
  /** What the call may still spend waiting on shared stores (the shared token cache and pacing), and how it spends it. */
  storeBudget?:
    | {
        /** Milliseconds the call may still wait on shared stores. */
        leftMs: () => number;
        /** Takes `ms` the limiter waited on its store for this call. */
        spend: (ms: number) => void;
      }
    | undefined;
}

/**
 * Hands out request slots. The client calls `acquire` before each attempt (nothing is sent
 * until it resolves) and `observe` after it. Implement it to pace with your own store; the SDK
 * ships an in-process limiter (the default, one budget per merchant per process) and
 * `RedisRateLimiter` in `myr-gateway/redis` (one budget for a fleet).
 *
 * @example
 * ```ts
 * const unlimited: RateLimiter = { acquire: async () => {}, observe: () => {} };
 * const gateway = new MyrGateway({ baseUrl, merchantId, apiKey, rateLimiter: unlimited });
 * ```
 */
export interface RateLimiter {
  /**
   * Resolves once a slot of `bucket` for `key` (a hash naming the merchant) is taken, to
   * nothing or to a name for the slot, which the client hands back to `observe` with its answer.
   * Rejects with `options.signal`'s reason when it aborts, and with a {@link RateLimitError}
   * (`RATE_LIMITED`, `retryable`, `retryAfter`) when no slot frees within `maxWaitMs`.
   */
  acquire(key: string, bucket: RateBucket, options: AcquireOptions): Promise<string | void>;
  /**
   * Learns from the answer to a request that took a slot (called once per acquired slot, with
   * the name `acquire` resolved to, if any).
   */
  observe(key: string, bucket: RateBucket, observation: RateLimitObservation, slot?: string): void;
}

/**
 * The error of a call that could not get a slot in time. Nothing was sent. `from`: where the
 * limit and window paced on came from: the service's own headers (or its published limits), or
 * the pacing state a fleet shares in Redis, which this process has not heard from the service.
 */
export function pacingError(
  bucket: RateBucket,
  limit: number,
  windowMs: number,
  waitMs: number,
  from: 'service' | 'redis' = 'service',
): RateLimitError {
  const seconds = Math.max(1, Math.ceil(waitMs / 1000));
  const allows =
    from === 'redis'
      ? `the pacing state shared in Redis allows ${limit} ${bucket} requests per ${Math.round(windowMs / 1000)} s (what another process ` +
        'recorded, not yet heard from the service by this one)'
      : `the service allows ${limit} ${bucket} requests per ${Math.round(windowMs / 1000)} s`;
  return new RateLimitError(
    `RATE_LIMITED: the client's own pacing found no free slot in time: ${allows} and this merchant's budget is used up for about ` +
      `${seconds} s. Nothing was sent; retry later, or give the call a longer totalTimeout.`,
    { code: 'RATE_LIMITED', retryable: true, retryAfter: seconds },
  );
}

/**
 * The hook a client uses to hand its logger's warnings to a limiter that was given no logger of
 * its own (`RedisRateLimiter`). Not part of {@link RateLimiter}: a limiter without it gets nothing.
 */
export const CLIENT_WARN = Symbol.for('myr-gateway.rate-limiter.client-warn');

/** Hands `warn` to `limiter` if it takes one (see {@link CLIENT_WARN}). */
export function handClientWarn(limiter: RateLimiter, warn: (message: string) => void): void {
  const take: unknown = Reflect.get(limiter, CLIENT_WARN);
  if (typeof take === 'function') Reflect.apply(take, limiter, [warn]);
}

/** A process-wide clock that never goes back (wall-clock jumps do not move windows). */
export const monotonicNow = (): number => performance.now();
