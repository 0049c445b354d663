/**
 * The exactly-once ledger of the webhook handler on Redis: every process behind the
 * load balancer claims callbacks in one place.
 *
 * @module
 */
import { randomUUID } from 'node:crypto';
import { ConfigurationError } from '../core/errors/base.js';
import type { WebhookClaim, WebhookStore } from '../webhooks/stores/types.js';
import { adaptClient, COMPARE_AND_DELETE, COMPARE_AND_PEXPIRE, RedisStoreError, script, type RedisCommands, type RedisStoreOptions } from './client.js';

// Values: `inflight:<token>` while a handler runs, `done` after it finished.
// Claim in one round trip: take the key, or say what holds it.
const CLAIM = script(`
if redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) then return 1 end
return redis.call('GET', KEYS[1])`);
// Done if this claim still holds the key, or nobody does (it expired meanwhile).
const COMPLETE = script(`
local v = redis.call('GET', KEYS[1])
if v == false or v == ARGV[1] then redis.call('SET', KEYS[1], 'done', 'PX', ARGV[2]) return 1 end
return 0`);

function ttl(ms: number): string {
  if (!Number.isFinite(ms) || ms < 1) throw new ConfigurationError('ttlMs must be a positive number of milliseconds', 'ttlMs');
  return String(Math.ceil(ms));
}

/**
 * A {@link WebhookStore} on Redis, for webhook handlers running in more than one
 * process: the gateway's retries of one callback, landing on different instances, run
 * the handler once. Claim and complete are one round trip each (a Lua script); complete,
 * release and renew only touch a key the caller's claim still holds.
 *
 * Fails closed: when Redis is down or slower than `timeoutMs`, every operation rejects
 * with a {@link RedisStoreError}, so the handler answers 503 and the gateway retries
 * later. Nothing is handled without a claim.
 *
 * Keys are `<keyPrefix>webhook:<idempotency key>` (a payment id and status, or a
 * webhook id); values are `inflight:<random token>` or `done`. No secret is stored.
 *
 * @example
 * ```ts
 * import { Redis } from 'ioredis';
 * import { createWebhookHandler } from 'myr-gateway/webhooks';
 * import { RedisWebhookStore } from 'myr-gateway/redis';
 *
 * const handler = createWebhookHandler({
 *   verifier: { apiKey: process.env.MYR_API_KEY! },
 *   store: new RedisWebhookStore({ client: new Redis(process.env.REDIS_URL!) }),
 *   onEvent: fulfil,
 * });
 * ```
 */
export class RedisWebhookStore implements WebhookStore {
  readonly #redis: RedisCommands;
  readonly #prefix: string;

  constructor(options: RedisStoreOptions) {
    const { redis, prefix } = adaptClient(options, 'RedisWebhookStore');
    this.#redis = redis;
    this.#prefix = `${prefix}webhook:`;
  }

  async claim(key: string, ttlMs: number): Promise<WebhookClaim> {
    const token = randomUUID();
    const value = `inflight:${token}`;
    const reply = await this.#redis.eval(CLAIM, [this.#prefix + key], [value, ttl(ttlMs)]).catch((error: unknown) => {
      // A claim that timed out may still sit in the client's offline queue and run once
      // Redis is back, holding the key for a handler that never runs. Queue a release of
      // it behind the claim on the same connection, so the two run in that order.
      this.#redis.compensate(COMPARE_AND_DELETE, [this.#prefix + key], [value]);
      throw error;
    });
    if (reply === 1) return { acquired: true, token };
    if (reply === 'done') return { acquired: false, state: 'done' };
    if (typeof reply === 'string' && reply.startsWith('inflight:')) return { acquired: false, state: 'in_flight' };
    // The key vanished between SET NX and GET cannot happen inside one script; anything
    // else is not ours: refuse rather than guess.
    throw new RedisStoreError('Redis holds a value this store did not write under a webhook key', 'unexpected_value');
  }

  async complete(key: string, token: string, ttlMs: number): Promise<void> {
    await this.#redis.eval(COMPLETE, [this.#prefix + key], [`inflight:${token}`, ttl(ttlMs)]);
  }

  async release(key: string, token: string): Promise<void> {
    await this.#redis.eval(COMPARE_AND_DELETE, [this.#prefix + key], [`inflight:${token}`]);
  }

  /**
   * Extends a claim the caller still holds by `ttlMs`, for handlers that may outlive
   * the handler's `inFlightTtlMs`. False when `token` no longer holds `key`.
   *
   * @example
   * ```ts
   * const held = await store.renew(key, token, 60_000);
   * ```
   */
  async renew(key: string, token: string, ttlMs: number): Promise<boolean> {
    return (await this.#redis.eval(COMPARE_AND_PEXPIRE, [this.#prefix + key], [`inflight:${token}`, ttl(ttlMs)])) === 1;
  }

  /** A secret-free view for logs (no tokens, no keys). */
  toJSON(): Record<string, unknown> {
    return { name: 'RedisWebhookStore', keyPrefix: this.#prefix };
  }

  /** @internal */
  [Symbol.for('nodejs.util.inspect.custom')](): string {
    return `RedisWebhookStore ${JSON.stringify(this.toJSON())}`;
  }
}
