/**
 * Pacing: the client keeps its own requests inside the service's rate limits instead of
 * provoking 429s. A {@link RateLimiter} hands out slots of a sliding window per merchant and
 * endpoint group ({@link RateBucket}); it starts from the published limits and follows what
 * the service's `X-RateLimit-*` headers say. Waiting for a slot happens before a request is
 * sent, so it is never a retry and never moves money twice.
 *
 * @module
 */
import { RateLimitError } from '../errors/service.js';
import type { Operation } from '../policy.js';
import { within } from '../wait.js';

/** Endpoint groups the service limits separately. */
export type RateBucket = 'token' | 'payment' | 'withdraw' | 'other';

/** The spec's limits per sliding minute, per merchant. */
export const PUBLISHED_LIMITS: Readonly<Record<RateBucket, number>> = Object.freeze({ token: 5, payment: 100, withdraw: 50, other: 100 });
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
export function pacingError(bucket: RateBucket, limit: number, windowMs: number, waitMs: number, from: 'service' | 'redis' = 'service'): RateLimitError {
  const seconds = Math.max(1, Math.ceil(waitMs / 1000));
  const allows =
    from === 'redis'
      ? `the pacing state shared in Redis allows ${limit} ${bucket} requests per ${Math.round(windowMs / 1000)} s (what another process ` +
        "recorded, not yet heard from the service by this one)"
      : `the service allows ${limit} ${bucket} requests per ${Math.round(windowMs / 1000)} s`;
  return new RateLimitError(
    `RATE_LIMITED: the client's own pacing found no free slot in time: ${allows} and this merchant's budget is used up for about ` +
      `${seconds} s. Nothing was sent; retry later, or give the call a longer totalTimeout.`,
    { code: 'RATE_LIMITED', retryable: true, retryAfter: seconds },
  );
}

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
  #windowKnown = false;

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

  /** Whether an answer (not a 429) was alone in its window: `Remaining = Limit − 1`, with a believable reset. */
  alone(o: RateLimitObservation): boolean {
    return o.status !== 429 && o.remaining === this.limit - 1 && o.resetInMs !== undefined && o.resetInMs >= 0 && o.resetInMs <= HOUR_MS;
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
   * rounded up to the next whole second (up to a second lost at every window edge).
   */
  learn(o: RateLimitObservation, now: number, inFlight: number, counted = 0): number | undefined {
    this.learnLimit(o);
    const resetInMs = o.resetInMs !== undefined && o.resetInMs >= 0 && o.resetInMs <= HOUR_MS ? o.resetInMs : undefined;
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
    if (free <= 0 && counted < this.limit) this.blockedUntil = Math.max(this.blockedUntil, now + resetInMs);
    return Math.max(0, free);
  }
}

interface Waiter {
  readonly signal: AbortSignal | undefined;
  readonly deadline: number;
  /** How long this call may still wait on a shared store (ms); Infinity when unbounded. */
  storeLeftMs: number;
  /** Charges time waited on the store to the call's budget. */
  readonly spendStore: ((ms: number) => void) | undefined;
  grant(slot?: string): void;
  fail(error: unknown): void;
}

/**
 * Calls waiting for a slot, first come first served, each bounded by its signal and its
 * deadline (`onTimeout` builds the error).
 */
export class WaitQueue {
  readonly #waiters: Waiter[] = [];

  get length(): number {
    return this.#waiters.length;
  }

  add(options: AcquireOptions, now: number, onTimeout: () => unknown, storeLeftMs = Number.POSITIVE_INFINITY): Promise<string | undefined> {
    const spendStore = options.storeBudget?.spend;
    const { signal } = options;
    if (signal?.aborted) return Promise.reject(signal.reason as Error);
    // A waiter is woken by other events too (a slot freed, a limiter gave up), so it settles
    // through a Settle: the pump that grants it sees it gone from the queue at once, and an
    // abort right after a grant cannot take the slot back from the caller.
    let waiter: Waiter | undefined;
    const leave = () => {
      const i = waiter === undefined ? -1 : this.#waiters.indexOf(waiter);
      if (i >= 0) this.#waiters.splice(i, 1);
    };
    return within<string | undefined, never>(
      (resolve, reject) => {
        waiter = { signal, deadline: now + options.maxWaitMs, storeLeftMs, spendStore, grant: resolve, fail: reject };
        this.#waiters.push(waiter);
      },
      {
        signal,
        ms: Math.max(1, Math.ceil(options.maxWaitMs)),
        onTimeout: () => {
          throw onTimeout();
        },
        done: leave,
      },
    );
  }

  /** The latest deadline of the waiting calls (0 when none waits). */
  latestDeadline(): number {
    return this.#waiters.reduce((latest, w) => Math.max(latest, w.deadline), 0);
  }

  /** The longest-waiting call, if any. */
  first(): Waiter | undefined {
    return this.#waiters[0];
  }

  /** The least store time left of the waiting calls (Infinity when none is bounded). */
  leastStoreLeft(): number {
    return this.#waiters.reduce((least, w) => Math.min(least, w.storeLeftMs), Number.POSITIVE_INFINITY);
  }

  /** Every waiting call spent `ms` waiting on the store; those with nothing left are removed and returned. */
  spendStore(ms: number): Waiter[] {
    for (const w of this.#waiters) {
      w.storeLeftMs -= ms;
      w.spendStore?.(ms);
    }
    const spent = this.#waiters.filter((w) => w.storeLeftMs <= 0);
    for (const w of spent) this.#waiters.splice(this.#waiters.indexOf(w), 1);
    return spent;
  }

  /** Every waiting call, removed from the queue. */
  drain(): Waiter[] {
    return this.#waiters.splice(0);
  }
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
