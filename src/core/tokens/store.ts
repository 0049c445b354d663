/**
 * The shape of a cached access token and of the store that caches it. Kept apart from
 * `manager.ts` (the token manager) and `shared.ts` (its single flight and limiter) so that
 * both import it and neither imports the other.
 *
 * @module
 */

/** A cached access token. */
export interface StoredToken {
  /** The bearer token. Secret. */
  accessToken: string;
  /** When it stops being valid, in epoch milliseconds. */
  expiresAt: number;
  /** When it was issued, in epoch milliseconds (limits the refresh margin to half the lifetime). */
  issuedAt?: number;
}

/**
 * Where tokens are cached. By default every client in the process shares one in-memory
 * store; implement this to share one token across processes (for example in Redis), so a
 * fleet stays under the token endpoint's 5 requests a minute. Keys look like
 * `myr-gateway:token:<sha256>` and never contain the api key or a token in clear.
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
  /** The token stored under `key`, or undefined. */
  get(key: string): Promise<StoredToken | undefined> | StoredToken | undefined;
  /** Stores `token` under `key` until `token.expiresAt`. */
  set(key: string, token: StoredToken): Promise<void> | void;
  /** Forgets the token under `key` (the service refused it). */
  delete(key: string): Promise<void> | void;
  /**
   * Optional: make one refresh serve every process sharing this store. Called inside the
   * in-process single flight. Implementations run `fetchToken` under a store-wide lock held by
   * exactly one caller (and store the result), or wait for the holder's result, bounded by `signal`.
   * `staleToken` is the token the service just rejected (TOKEN_EXPIRED/UNAUTHORIZED): if the store
   * already holds a different, fresh token, return it without fetching (one replacement per fleet).
   */
  refresh?(key: string, fetchToken: () => Promise<StoredToken>, options: { signal?: AbortSignal; staleToken?: string }): Promise<StoredToken>;
}

/** A well-formed token, usable in an Authorization header; anything else is treated as a miss. */
export function isStoredToken(value: unknown): value is StoredToken {
  if (value === null || typeof value !== 'object') return false;
  const { accessToken, expiresAt } = value as Partial<StoredToken>;
  return (
    typeof accessToken === 'string' &&
    accessToken.length <= 8192 &&
    /^[\x21-\x7e]+$/.test(accessToken) &&
    typeof expiresAt === 'number' &&
    Number.isFinite(expiresAt)
  );
}
