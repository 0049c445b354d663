/**
 * The errors of the Redis stores: Redis unreachable or failing ({@link RedisStoreError},
 * retryable), and a server too old for the stores' scripts ({@link RedisVersionError}, not).
 *
 * @module
 */
import { MyrGatewayError } from '../core/errors/base.js';

/**
 * The oldest Redis the stores' scripts run on: 5.0 replicates a script by its effects, so a
 * script may read TIME before it writes. Checked once per client at first use.
 *
 * @example
 * ```ts
 * console.log(`needs Redis ${MINIMUM_REDIS_VERSION}+`); // needs Redis 5.0.0+
 * ```
 */
export const MINIMUM_REDIS_VERSION = '5.0.0';
/**
 * The oldest Valkey: its first release, 7.2, already replicates scripts by their effects.
 *
 * @example
 * ```ts
 * console.log(`needs Valkey ${MINIMUM_VALKEY_VERSION}+`); // needs Valkey 7.2.0+
 * ```
 */
export const MINIMUM_VALKEY_VERSION = '7.2.0';

/**
 * Redis did not answer in time, refused the connection, or answered with an error.
 * The webhook handler turns it into a 503 (the gateway retries later); the client
 * falls back to a token of its own process.
 *
 * `cause` is only a short code (`timeout`, `ECONNREFUSED`, …): a Redis client's own
 * error can carry the command's arguments, and a token is one of them.
 *
 * @example
 * ```ts
 * try { await store.claim(key, 60_000); }
 * catch (error) { if (error instanceof RedisStoreError) answer503(); }
 * ```
 */
export class RedisStoreError extends MyrGatewayError {
  /** `'RedisStoreError'`, so logs show which error it is. */
  override name = 'RedisStoreError';
  constructor(message: string, cause: string) {
    super(message, { code: 'STORE_UNAVAILABLE', retryable: true, cause });
  }
}

/**
 * The Redis (or Valkey) server is older than the stores support ({@link MINIMUM_REDIS_VERSION},
 * {@link MINIMUM_VALKEY_VERSION}). Checked once per client at its first use, from `INFO server`;
 * every operation of the stores on that client then rejects with this error, code
 * `REDIS_VERSION_UNSUPPORTED`, not retryable: upgrading Redis is the fix.
 *
 * @example
 * ```ts
 * try { await store.claim(key, 60_000); }
 * catch (error) { if (error instanceof RedisVersionError) alertOps(error.serverVersion); }
 * ```
 */
export class RedisVersionError extends MyrGatewayError {
  /** `'RedisVersionError'`, so logs show which error it is. */
  override name = 'RedisVersionError';
  /** What the server reported, e.g. `'Redis 4.0.14'`. */
  readonly serverVersion: string;
  constructor(serverVersion: string) {
    super(
      `${serverVersion} is not supported: the Redis stores need Redis ${MINIMUM_REDIS_VERSION} or later, or Valkey ${MINIMUM_VALKEY_VERSION} or later ` +
        '(their scripts read the server time before writing, which older servers refuse)',
      { code: 'REDIS_VERSION_UNSUPPORTED', retryable: false },
    );
    this.serverVersion = serverVersion;
  }
}
