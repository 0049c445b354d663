/**
 * The shape of a cached access token and of the store that caches it. Kept apart from
 * `manager.ts` (the token manager) and `shared.ts` (its single flight and limiter) so that
 * both import it and neither imports the other.
 *
 * @module
 */

/**
 * A cached access token. What a {@link TokenStore} is handed and gives back is always the
 * **sealed** form: `accessToken` is `v1.<iv>.<ciphertext>` (AES-256-GCM under a key derived from
 * the api key, bound to the store key), so a store, and whoever reads it, never holds a usable
 * token. Keep it as an opaque string; a value that does not open is ignored (one warning).
 */
export interface StoredToken {
  /** The bearer token; in a store, its sealed form (opaque, printable ASCII). Secret either way. */
  accessToken: string;
  /** When it stops being valid, in epoch milliseconds on the client's clock (`now`), counted from when it was asked for. */
  expiresAt: number;
  /**
   * A time on the same clock at which the token had `expiresAt - issuedAt` left: when it was
   * asked for, or, in what the client hands a store, the time of that write. A store shared by
   * processes should keep the token `expiresAt - issuedAt` from the write (Redis `PX`), which
   * needs no shared clock, rather than until `expiresAt` (`PXAT`), and report `expiresAt` back
   * from the time left. Also bounds the refresh margin to half the lifetime.
   */
  issuedAt?: number;
}

/** What {@link TokenStore.refresh} is told besides the key and how to fetch. */
export interface TokenRefreshOptions {
  /** Ends the wait: the caller's call is over. */
  signal?: AbortSignal;
  /** The (sealed) token the service just refused; do not hand it back. */
  staleToken?: string;
  /**
   * Call it whenever the refresh is seen still under way in another process (its lock held):
   * the client then keeps waiting for it. A refresh that shows no progress within the call's
   * `tokenStoreTimeout` (and, once it has, for `tokenStoreTimeout + timeout`) is given up for a
   * token fetched in this process. Calling `fetchToken` counts as progress until it settles.
   */
  progress?: () => void;
}

/**
 * Where tokens are cached. By default every client in the process shares one in-memory
 * store; implement this to share one token across processes (for example in Redis), so a
 * fleet stays under the token endpoint's 5 requests a minute. Keys look like
 * `myr-gateway:token:<sha256>` and never contain the api key or a token in clear.
 *
 * @example
 * ```ts
 * // `token.accessToken` arrives sealed: the store never sees a usable token.
 * const store: TokenStore = {
 *   get: async (key) => JSON.parse((await redis.get(key)) ?? 'null') ?? undefined,
 *   set: async (key, token) => { await redis.set(key, JSON.stringify(token), 'PX', token.expiresAt - (token.issuedAt ?? Date.now())); },
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
   * exactly one caller (and store the result), or wait for the holder's result, bounded by `signal`,
   * calling `progress` while the holder is seen alive. `staleToken` is the token the service just
   * rejected (TOKEN_EXPIRED/UNAUTHORIZED): if the store already holds a different, fresh token,
   * return it without fetching (one replacement per fleet).
   */
  refresh?(key: string, fetchToken: () => Promise<StoredToken>, options: TokenRefreshOptions): Promise<StoredToken>;
}

/** A well-formed token, usable in an Authorization header; anything else is treated as a miss. */
export function isStoredToken(value: unknown): value is StoredToken {
  if (value === null || typeof value !== 'object') return false;
  const { accessToken, expiresAt } = value as Partial<StoredToken>; // a guard: the fields are checked below
  return (
    typeof accessToken === 'string' &&
    accessToken.length <= 8192 &&
    /^[\x21-\x7e]+$/.test(accessToken) &&
    typeof expiresAt === 'number' &&
    Number.isFinite(expiresAt)
  );
}
