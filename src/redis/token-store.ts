/**
 * One access token per merchant for the whole fleet, refreshed by one process at a time.
 *
 * @module
 */
import { createHash, randomUUID } from 'node:crypto';
import type { StoredToken, TokenRefreshOptions, TokenStore } from '../core/tokens/store.js';
import { DEFAULTS } from '../core/settings.js';
import { milliseconds } from '../core/milliseconds.js';
import { TimeoutError } from '../core/errors/service.js';
import { wait } from '../core/wait.js';
import { adaptClient, COMPARE_AND_LET_GO, script, type RedisCommands, type RedisStoreOptions } from './client.js';

/** Options of {@link RedisTokenStore}. */
export interface RedisTokenStoreOptions extends RedisStoreOptions {
  /**
   * How long the refresh lock lives, in ms. The holder extends it while its
   * `POST /auth/token` runs; a holder that dies frees it after this long. Give every process
   * of the fleet the same value: a lock found with no TTL, or a longer one, is taken over.
   *
   * @default 10_000
   */
  lockTtlMs?: number | undefined;
  /**
   * How often a process waiting for another one's refresh looks for the result, in ms.
   *
   * @default 50
   */
  pollIntervalMs?: number | undefined;
  /**
   * Longest wait for a refresh when the caller gives no signal, in ms.
   *
   * @default 30_000
   */
  waitTimeoutMs?: number | undefined;
  /**
   * A token found in Redis that expires sooner than this (or than half its lifetime, if
   * shorter) is not taken as a fresh result of somebody else's refresh. Keep it equal to the
   * client's `tokenRefreshMarginMs`.
   *
   * @default 60_000
   */
  refreshMarginMs?: number | undefined;
}

// The value and the time it has left, in one step: freshness is judged on Redis's clock, so a
// process whose clock is off cannot make the others think a token fresher or staler than it is.
// A key of another type is no token (a miss, which the next refresh overwrites), not an error
// that would keep every process fetching tokens of its own.
const GET_WITH_TTL = script(`
if redis.call('TYPE', KEYS[1]).ok ~= 'string' then return false end
local value = redis.call('GET', KEYS[1])
if not value then return false end
return {value, redis.call('PTTL', KEYS[1])}`);

// Store the new token and free the lock in one step, whoever holds the lock now.
const SET_AND_UNLOCK = script(`
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
if redis.call('GET', KEYS[2]) == ARGV[3] then redis.call('DEL', KEYS[2]) end
return 1`);

// Takes the refresh lock, or takes it over from a holder this store cannot be (a lock with no
// TTL, or a TTL longer than any holder of this store sets: not written by this SDK, or by one
// configured otherwise). Returns 1 taken, 2 taken over, 0 held by a live holder.
const TAKE_LOCK = script(`
if redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) then return 1 end
local ttl = redis.call('PTTL', KEYS[1])
if ttl ~= -1 and ttl <= tonumber(ARGV[2]) then return 0 end
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
return 2`);

/** The one millisecond rule (core/milliseconds.ts), capped at 10 min for the lock and its waits. */
function whole(value: number | undefined, fallback: number, field: string, min: number): number {
  return milliseconds(value ?? fallback, field, min, 600_000);
}

/** What Redis keeps: the (sealed) token and its lifetime, never its expiry on some process's clock. */
function serialize(token: StoredToken, lifetimeMs: number): string {
  return JSON.stringify({ accessToken: token.accessToken, lifetimeMs });
}

/** How long to keep `token`: the time it has left as the client counted it (no clock shared), else until its expiry on this clock. */
function lifetimeOf(token: StoredToken): number {
  return Math.ceil(token.issuedAt === undefined ? token.expiresAt - Date.now() : token.expiresAt - token.issuedAt);
}

/** The token in a `GET_WITH_TTL` answer, its expiry `PTTL` from now on this process's clock. */
function parse(reply: unknown): StoredToken | undefined {
  if (!Array.isArray(reply) || typeof reply[0] !== 'string') return undefined;
  const ttl = Number(reply[1]);
  if (!(ttl > 0)) return undefined; // no expiry (not written by this store) or gone
  try {
    const value = JSON.parse(reply[0]) as { accessToken?: unknown; lifetimeMs?: unknown }; // this store's own JSON; each field is checked below
    if (typeof value.accessToken !== 'string') return undefined;
    const expiresAt = Date.now() + ttl;
    const lifetime = value.lifetimeMs;
    const issued = typeof lifetime === 'number' && lifetime >= ttl ? { issuedAt: expiresAt - lifetime } : {};
    return { accessToken: value.accessToken, expiresAt, ...issued };
  } catch {
    // A value we cannot read is treated as no token: the next refresh overwrites it.
    return undefined;
  }
}

/**
 * A {@link TokenStore} on Redis: every process of a merchant shares one access token,
 * and when it needs replacing exactly one process in the fleet calls `POST /auth/token`
 * (under a `SET NX PX` lock with a random fencing value, freed by compare-and-delete)
 * while the others wait for its result. A token the service rejected with
 * `TOKEN_EXPIRED` is replaced once for the whole fleet.
 *
 * The value under `<keyPrefix>token:{…}` is JSON `{ accessToken, lifetimeMs }` where
 * `accessToken` is what the client hands the store: sealed (AES-256-GCM under a key derived
 * from the api key), so reading Redis does not give a usable token. Its expiry is Redis's
 * `PTTL`, so processes with different clocks agree on it. Key names are a hash of the
 * client's cache key: neither the api key nor the token appears in them, and the api key is
 * never stored. Restrict who can write there all the same (see docs/fleet.md, ACLs).
 *
 * Redis down or slower than `timeoutMs`: operations reject with a
 * {@link RedisStoreError} instead of hanging.
 *
 * @example
 * ```ts
 * import { Redis } from 'ioredis';
 * import { MyrGateway } from 'myr-gateway';
 * import { RedisTokenStore } from 'myr-gateway/redis';
 *
 * const gateway = new MyrGateway({
 *   baseUrl: process.env.MYR_BASE_URL!,
 *   merchantId: process.env.MYR_MERCHANT_ID!,
 *   apiKey: process.env.MYR_API_KEY!,
 *   tokenStore: new RedisTokenStore({ client: new Redis(process.env.REDIS_URL!) }),
 * });
 * ```
 */
export class RedisTokenStore implements TokenStore {
  readonly #redis: RedisCommands;
  readonly #prefix: string;
  readonly #lockTtlMs: number;
  readonly #pollMs: number;
  readonly #waitMs: number;
  readonly #marginMs: number;

  constructor(options: RedisTokenStoreOptions) {
    const { redis, prefix } = adaptClient(options, 'RedisTokenStore');
    this.#redis = redis;
    this.#prefix = prefix;
    this.#lockTtlMs = whole(options.lockTtlMs, 10_000, 'lockTtlMs', 100);
    this.#pollMs = whole(options.pollIntervalMs, 50, 'pollIntervalMs', 1);
    this.#waitMs = whole(options.waitTimeoutMs, 30_000, 'waitTimeoutMs', 1);
    this.#marginMs = whole(options.refreshMarginMs, DEFAULTS.tokenRefreshMarginMs, 'refreshMarginMs', 0);
  }

  // The braces keep a token and its lock in one Redis Cluster slot.
  #keys(key: string): { token: string; lock: string } {
    const id = createHash('sha256').update(key).digest('hex').slice(0, 32);
    return { token: `${this.#prefix}token:{${id}}`, lock: `${this.#prefix}token-lock:{${id}}` };
  }

  /** The fleet's token under `key`, or undefined. */
  async get(key: string): Promise<StoredToken | undefined> {
    return parse(await this.#redis.eval(GET_WITH_TTL, [this.#keys(key).token], []));
  }

  /** Stores the token for `expiresAt - issuedAt` from now (the client sets `issuedAt` to the write's time), or until `expiresAt` without one. */
  async set(key: string, token: StoredToken): Promise<void> {
    const ttl = lifetimeOf(token);
    if (ttl > 0) await this.#redis.send(['SET', this.#keys(key).token, serialize(token, ttl), 'PX', String(ttl)]);
  }

  /** Forgets the token (the service refused it). */
  async delete(key: string): Promise<void> {
    await this.#redis.send(['DEL', this.#keys(key).token]);
  }

  /**
   * Replaces the token once for the fleet: takes the lock and calls `fetchToken`, or
   * waits (polling every `pollIntervalMs`, bounded by `signal` or `waitTimeoutMs`) for
   * the process that holds it, calling `progress` each time the lock is seen held. A
   * holder that dies frees the lock within `lockTtlMs`; a waiter then takes it. A lock with no
   * TTL, or a TTL above `lockTtlMs`, was not set by a holder of this store: it is taken over at
   * once (shared state is input; it must not hold the fleet's calls). A token in
   * Redis other than `staleToken` that appeared after this call started, or is fresh by
   * `refreshMarginMs` (at most half its lifetime), is returned without fetching.
   *
   * @example
   * ```ts
   * const token = await store.refresh(key, fetchToken, { staleToken: rejected, signal });
   * ```
   */
  async refresh(
    key: string,
    fetchToken: () => Promise<StoredToken>,
    options: TokenRefreshOptions = {},
  ): Promise<StoredToken> {
    const keys = this.#keys(key);
    const signal = options.signal ?? AbortSignal.timeout(this.#waitMs);
    const before = await this.get(key);
    const margin = (t: StoredToken) =>
      t.issuedAt === undefined ? this.#marginMs : Math.min(this.#marginMs, (t.expiresAt - t.issuedAt) / 2);
    const usable = (t: StoredToken | undefined): t is StoredToken =>
      t !== undefined &&
      t.accessToken !== options.staleToken &&
      t.expiresAt > Date.now() &&
      (t.accessToken !== before?.accessToken || t.expiresAt - margin(t) > Date.now());
    if (usable(before)) return before;

    for (;;) {
      const fence = randomUUID();
      const locked = await this.#redis
        .eval(TAKE_LOCK, [keys.lock], [fence, String(this.#lockTtlMs)])
        .catch((error: unknown) => {
          // As for a webhook claim: a lock request still queued must not hold the lock later.
          this.#redis.compensate(COMPARE_AND_LET_GO, [keys.lock], [fence]);
          throw error;
        });
      if (Number(locked) > 0) {
        const current = await this.get(key).catch(async (error: unknown) => {
          await this.#unlock(keys.lock, fence);
          throw error;
        });
        if (usable(current)) {
          await this.#unlock(keys.lock, fence);
          return current;
        }
        return this.#fetchUnderLock(keys, fence, fetchToken);
      }
      options.progress?.(); // the holder is alive: its lock would have expired otherwise
      try {
        await wait(this.#pollMs, signal);
      } catch {
        throw new TimeoutError('Gave up waiting for another process to refresh the access token', {
          code: 'TIMEOUT',
          retryable: true,
        });
      }
      const current = await this.get(key);
      if (usable(current)) return current;
    }
  }

  async #fetchUnderLock(
    keys: { token: string; lock: string },
    fence: string,
    fetchToken: () => Promise<StoredToken>,
  ): Promise<StoredToken> {
    // Keep the lock while the request runs, however long its retries take.
    const extend = setInterval(
      () => {
        this.#redis.eval(COMPARE_AND_LET_GO, [keys.lock], [fence, String(this.#lockTtlMs)]).catch(() => undefined);
      },
      Math.max(50, Math.floor(this.#lockTtlMs / 3)),
    );
    let token: StoredToken;
    try {
      token = await fetchToken();
    } catch (error) {
      clearInterval(extend);
      await this.#unlock(keys.lock, fence).catch(() => undefined);
      throw error;
    }
    clearInterval(extend);
    const ttl = lifetimeOf(token);
    // The token is good whether or not Redis takes it: a failed write only means the other
    // processes refresh again once the lock expires.
    const stored =
      ttl > 0
        ? this.#redis.eval(SET_AND_UNLOCK, [keys.token, keys.lock], [serialize(token, ttl), String(ttl), fence])
        : this.#unlock(keys.lock, fence);
    await stored.catch(() => undefined);
    return token;
  }

  async #unlock(lock: string, fence: string): Promise<void> {
    await this.#redis.eval(COMPARE_AND_LET_GO, [lock], [fence]);
  }

  /** A secret-free view for logs (no tokens, no keys). */
  toJSON(): Record<string, unknown> {
    return { name: 'RedisTokenStore', keyPrefix: this.#prefix };
  }

  /** @internal */
  [Symbol.for('nodejs.util.inspect.custom')](): string {
    return `RedisTokenStore ${JSON.stringify(this.toJSON())}`;
  }
}
