/**
 * Access tokens: cached, reused, refreshed shortly before they expire, and fetched
 * single-flight, so any number of concurrent calls on a cold cache cause one
 * `POST /auth/token`. A local sliding window keeps this client under the endpoint's
 * 5 requests a minute whatever its callers do.
 *
 * @module
 */
import { RateLimitError } from './errors.js';

/** A cached access token. */
export interface StoredToken {
  /** The bearer token. Secret. */
  accessToken: string;
  /** When it stops being valid, in epoch milliseconds. */
  expiresAt: number;
}

/**
 * Where tokens are cached. The default keeps them in memory; implement this to share
 * one token across processes (for example in Redis), so a fleet does not exceed the
 * token endpoint's 5 requests a minute.
 *
 * @example
 * ```ts
 * const store: TokenStore = {
 *   get: async (key) => JSON.parse((await redis.get(key)) ?? 'null') ?? undefined,
 *   set: async (key, token) => { await redis.set(key, JSON.stringify(token), 'PXAT', token.expiresAt); },
 *   delete: async (key) => { await redis.del(key); },
 * };
 * ```
 */
export interface TokenStore {
  get(key: string): Promise<StoredToken | undefined> | StoredToken | undefined;
  set(key: string, token: StoredToken): Promise<void> | void;
  delete(key: string): Promise<void> | void;
  /** Optional: one refresh for every process sharing this store. Called inside the in-process single flight.
   * Run `fetchToken` under a store-wide lock held by exactly one caller (store the result), or wait for the
   * holder's result, bounded by `signal`. `staleToken`: the token the service just rejected; if the store holds
   * a different fresh token, return it without fetching (one replacement per fleet). */
  refresh?(key: string, fetchToken: () => Promise<StoredToken>, options: { signal?: AbortSignal; staleToken?: string }): Promise<StoredToken>;
}

/** The default {@link TokenStore}: a Map in this process. */
export class MemoryTokenStore implements TokenStore {
  readonly #tokens = new Map<string, StoredToken>();
  get(key: string): StoredToken | undefined {
    return this.#tokens.get(key);
  }
  set(key: string, token: StoredToken): void {
    this.#tokens.set(key, token);
  }
  delete(key: string): void {
    this.#tokens.delete(key);
  }
  /** @internal */
  [Symbol.for('nodejs.util.inspect.custom')](): string {
    return `MemoryTokenStore { size: ${this.#tokens.size} }`;
  }
  toJSON(): Record<string, unknown> {
    return { size: this.#tokens.size };
  }
}

/** Token endpoint limit from the spec: 5 requests in any 60 s. */
export const TOKEN_REQUESTS_PER_MINUTE = 5;

export interface TokenManagerOptions {
  store: TokenStore;
  /** Cache key: one per base URL and merchant. */
  key: string;
  /** Performs `POST /auth/token` (with its own timeouts) and returns the token. */
  fetchToken: () => Promise<StoredToken>;
  now: () => number;
  /** Refresh this long before expiry. */
  refreshMarginMs: number;
}

export class TokenManager {
  readonly #options: TokenManagerOptions;
  #inFlight: Promise<StoredToken> | undefined;
  /** Start times of token requests in the last minute. */
  readonly #recent: number[] = [];

  constructor(options: TokenManagerOptions) {
    this.#options = options;
  }

  /**
   * A valid token: cached if fresh, else one single-flight refresh shared by all callers.
   * `signal` may be a getter, so the hot path (a cached token) never builds one.
   */
  async get(signal?: AbortSignal | (() => AbortSignal)): Promise<string> {
    const cached = await this.#options.store.get(this.#options.key);
    if (cached && cached.expiresAt - this.#options.refreshMarginMs > this.#options.now()) return cached.accessToken;
    return (await raceSignal(this.#refresh(), typeof signal === 'function' ? signal() : signal)).accessToken;
  }

  /**
   * Drops `staleToken` after the service said TOKEN_EXPIRED, unless another caller has
   * already replaced it, then returns a fresh token (single-flight).
   */
  async renew(staleToken: string, signal?: AbortSignal): Promise<string> {
    const cached = await this.#options.store.get(this.#options.key);
    if (cached && cached.accessToken !== staleToken && cached.expiresAt > this.#options.now()) {
      return cached.accessToken;
    }
    // A shared store replaces the stale token itself: deleting it here could delete the
    // replacement another process just stored.
    if (cached?.accessToken === staleToken && !this.#options.store.refresh) await this.#options.store.delete(this.#options.key);
    return (await raceSignal(this.#refresh(staleToken), signal)).accessToken;
  }

  /** Forget the cached token (for example after UNAUTHORIZED). */
  async forget(token: string): Promise<void> {
    const cached = await this.#options.store.get(this.#options.key);
    if (cached?.accessToken === token) await this.#options.store.delete(this.#options.key);
  }

  // One flight for everyone; it is not tied to any one caller's signal, so a caller that
  // aborts does not fail the others waiting on the same refresh.
  #refresh(staleToken?: string): Promise<StoredToken> {
    if (this.#inFlight) return this.#inFlight;
    const { store, key, fetchToken } = this.#options;
    const run = async (): Promise<StoredToken> => {
      if (store.refresh) return store.refresh(key, fetchToken, staleToken === undefined ? {} : { staleToken });
      const token = await fetchToken();
      await store.set(key, token);
      return token;
    };
    const flight = run().finally(() => {
      if (this.#inFlight === flight) this.#inFlight = undefined;
    });
    this.#inFlight = flight;
    return flight;
  }

  /**
   * Called before every `POST /auth/token` attempt: refuses, with a RateLimitError, a
   * sixth token request inside one minute.
   */
  takeSlot(): void {
    const now = this.#options.now();
    while (this.#recent.length > 0 && (this.#recent[0] as number) <= now - 60_000) this.#recent.shift();
    if (this.#recent.length >= TOKEN_REQUESTS_PER_MINUTE) {
      const waitMs = (this.#recent[0] as number) + 60_000 - now;
      throw new RateLimitError(
        `RATE_LIMITED: this client already requested ${TOKEN_REQUESTS_PER_MINUTE} access tokens in the last minute ` +
          `(the service's limit for POST /auth/token); not sending another. Check the credentials and retry in ${Math.ceil(waitMs / 1000)} s.`,
        { code: 'RATE_LIMITED', retryable: true, retryAfter: Math.ceil(waitMs / 1000) },
      );
    }
    this.#recent.push(now);
  }
}

/** Resolves like `promise`, or rejects with the signal's reason as soon as it aborts. */
function raceSignal<T>(promise: Promise<T>, signal: AbortSignal | undefined): Promise<T> {
  if (!signal) return promise;
  if (signal.aborted) return Promise.reject(signal.reason as Error);
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(signal.reason as Error);
    signal.addEventListener('abort', onAbort, { once: true });
    promise.then(
      (value) => {
        signal.removeEventListener('abort', onAbort);
        resolve(value);
      },
      (error: unknown) => {
        signal.removeEventListener('abort', onAbort);
        reject(error as Error);
      },
    );
  });
}
