/**
 * The exactly-once ledger of the webhook handler on Redis: every process behind the
 * load balancer claims callbacks in one place.
 *
 * @module
 */
import { randomUUID } from 'node:crypto';
import { ConfigurationError } from '../core/errors/base.js';
import type { PaymentOrder, WebhookClaim, WebhookStore } from '../webhooks/stores/types.js';
import { adaptClient, COMPARE_AND_DELETE, COMPARE_AND_PEXPIRE, script, type RedisCommands, type RedisStoreOptions } from './client.js';

// Values: `inflight:<token>` while a handler runs, `done` after it finished, always with a TTL.
// Anything else under a webhook key was not written by this store (shared state is input): a
// value of another type or shape, or one of ours without a TTL, is replaced by the claim (2), so
// it can neither suppress nor block fulfilment. A claim holding longer than this caller's TTL is
// cut to it (3): no in-flight value blocks a key longer than one claim.
// With KEYS[2] (the payment's high-water mark) and ARGV[3] (this status's rank): a free key
// of a status older than one completed answers 'superseded'.
const CLAIM = script(`
if KEYS[2] and redis.call('EXISTS', KEYS[1]) == 0 and redis.call('TYPE', KEYS[2]).ok == 'string' then
  local highest = tonumber(redis.call('GET', KEYS[2]))
  if highest and highest > tonumber(ARGV[3]) then return 'superseded' end
end
if redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) then return 1 end
local ours = false
local v = false
if redis.call('TYPE', KEYS[1]).ok == 'string' then
  v = redis.call('GET', KEYS[1])
  ours = redis.call('PTTL', KEYS[1]) > 0 and (v == 'done' or string.sub(v, 1, 9) == 'inflight:')
end
if not ours then
  redis.call('DEL', KEYS[1])
  redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
  return 2
end
if v == 'done' then return 'done' end
if redis.call('PTTL', KEYS[1]) > tonumber(ARGV[2]) then redis.call('PEXPIRE', KEYS[1], ARGV[2]) return 3 end
return 'inflight'`);
// Done if this claim still holds the key (1), or nobody does (2: it expired or the store lost
// it meanwhile, so the claim was lost); a key held by anything else is left alone (0).
// With KEYS[2] and ARGV[3], the payment's high-water mark rises to this rank in the same step.
const COMPLETE = script(`
local held = 0
if redis.call('TYPE', KEYS[1]).ok == 'none' then held = 2
elseif redis.call('TYPE', KEYS[1]).ok == 'string' and redis.call('GET', KEYS[1]) == ARGV[1] then held = 1
else return 0 end
redis.call('SET', KEYS[1], 'done', 'PX', ARGV[2])
if KEYS[2] then
  local highest = redis.call('TYPE', KEYS[2]).ok == 'string' and tonumber(redis.call('GET', KEYS[2])) or nil
  if not highest or highest < tonumber(ARGV[3]) then redis.call('SET', KEYS[2], ARGV[3], 'PX', ARGV[2]) end
end
return held`);

function ttl(ms: number): string {
  if (!Number.isFinite(ms) || ms < 1) throw new ConfigurationError('ttlMs must be a positive number of milliseconds', 'ttlMs');
  return String(Math.ceil(ms));
}

/** Options of {@link RedisWebhookStore}. */
export interface RedisWebhookStoreOptions extends RedisStoreOptions {
  /**
   * After a claim and after a completion, wait (Redis `WAIT`) until `replicas` replicas
   * acknowledged the write, at most `timeoutMs` (below the store's `timeoutMs`). Fewer in
   * time is reported as `under_replicated` (the handler's `onError`), not refused: the
   * write stands on the primary, and a failover before the replicas catch up can lose it
   * (see docs/fleet.md, "When Redis loses data").
   *
   * @example
   * ```ts
   * new RedisWebhookStore({ client, timeoutMs: 1000, waitForReplicas: { replicas: 1, timeoutMs: 200 } });
   * ```
   *
   * @default undefined (no WAIT: one round trip per claim and per completion)
   */
  waitForReplicas?: { readonly replicas: number; readonly timeoutMs: number } | undefined;
}

function replicaWait(options: RedisWebhookStoreOptions): [string, string, string] | undefined {
  const wait = options.waitForReplicas;
  if (wait === undefined) return undefined;
  const storeTimeout = options.timeoutMs ?? 1000;
  if (!Number.isInteger(wait.replicas) || wait.replicas < 1) {
    throw new ConfigurationError('waitForReplicas.replicas must be a whole number of at least 1', 'waitForReplicas');
  }
  if (!Number.isInteger(wait.timeoutMs) || wait.timeoutMs < 1 || wait.timeoutMs >= storeTimeout) {
    throw new ConfigurationError('waitForReplicas.timeoutMs must be a whole number of ms below the store timeoutMs', 'waitForReplicas');
  }
  return ['WAIT', String(wait.replicas), String(wait.timeoutMs)];
}

/**
 * A {@link WebhookStore} on Redis, for webhook handlers running in more than one
 * process: the gateway's retries of one callback, landing on different instances, run
 * the handler once. Claim and complete are one round trip each (a Lua script); complete,
 * release and renew only touch a key the caller's claim still holds, and answer `false`
 * when it no longer did (the handler then reports `CLAIM_LOST`).
 *
 * Fails closed: when Redis is down or slower than `timeoutMs`, every operation rejects
 * with a {@link RedisStoreError}, so the handler answers 503 and the gateway retries
 * later. Nothing is handled without a claim.
 *
 * Keys are `<keyPrefix>webhook:<idempotency key>` (a payment id and status, or a
 * webhook id); values are `inflight:<random token>` or `done`, always with a TTL. No
 * secret is stored. A value of any other shape (written by something else) is replaced
 * by the next claim and reported as `foreign_value`.
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
  readonly #wait: [string, string, string] | undefined;

  constructor(options: RedisWebhookStoreOptions) {
    const { redis, prefix } = adaptClient(options, 'RedisWebhookStore');
    this.#redis = redis;
    this.#prefix = `${prefix}webhook:`;
    this.#wait = replicaWait(options);
  }

  async claim(key: string, ttlMs: number, order?: PaymentOrder): Promise<WebhookClaim> {
    const token = randomUUID();
    const value = `inflight:${token}`;
    const [keys, rank] = this.#keys(key, order);
    const reply = await this.#redis.eval(CLAIM, keys, [value, ttl(ttlMs), ...rank]).catch((error: unknown) => {
      // A claim that timed out may still sit in the client's offline queue and run once
      // Redis is back, holding the key for a handler that never runs. Queue a release of
      // it behind the claim on the same connection, so the two run in that order.
      this.#redis.compensate(COMPARE_AND_DELETE, [this.#prefix + key], [value]);
      throw error;
    });
    if (reply === 1 || reply === 2) {
      const replicated = await this.#replicated();
      const warning = reply === 2 ? 'foreign_value' : replicated ? undefined : 'under_replicated';
      return warning === undefined ? { acquired: true, token } : { acquired: true, token, warning };
    }
    if (reply === 'done') return { acquired: false, state: 'done' };
    if (reply === 'superseded') return { acquired: false, state: 'superseded' };
    return { acquired: false, state: 'in_flight' };
  }

  async complete(key: string, token: string, ttlMs: number, order?: PaymentOrder): Promise<boolean | 'under_replicated'> {
    const [keys, rank] = this.#keys(key, order);
    const reply = await this.#redis.eval(COMPLETE, keys, [`inflight:${token}`, ttl(ttlMs), ...rank]);
    if (reply !== 1) return false;
    return (await this.#replicated()) ? true : 'under_replicated';
  }

  async release(key: string, token: string): Promise<boolean> {
    return (await this.#redis.eval(COMPARE_AND_DELETE, [this.#prefix + key], [`inflight:${token}`])) === 1;
  }

  /**
   * Extends a claim the caller still holds by `ttlMs`, for handlers that may outlive
   * the handler's `inFlightTtlMs`. False when `token` no longer holds `key`.
   *
   * @example
   * ```ts
   * const held = await store.renew(key, token, 4_000);
   * ```
   */
  async renew(key: string, token: string, ttlMs: number): Promise<boolean> {
    return (await this.#redis.eval(COMPARE_AND_PEXPIRE, [this.#prefix + key], [`inflight:${token}`, ttl(ttlMs)])) === 1;
  }

  /** The script's keys (the idempotency key, and the payment's high-water mark) and its rank argument. */
  #keys(key: string, order: PaymentOrder | undefined): [string[], string[]] {
    if (order === undefined) return [[this.#prefix + key], []];
    return [[this.#prefix + key, `${this.#prefix}order:${order.paymentId}`], [String(order.rank)]];
  }

  /** Whether the replicas asked for acknowledged the last write (true when none were asked for). */
  async #replicated(): Promise<boolean> {
    const wait = this.#wait;
    if (wait === undefined) return true;
    const acknowledged = await this.#redis.send(wait).catch(() => 0);
    return typeof acknowledged === 'number' && acknowledged >= Number(wait[1]);
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
