/**
 * The exactly-once ledger of the webhook handler on Redis: every process behind the
 * load balancer claims callbacks in one place.
 *
 * @module
 */
import { createHash, createHmac, hkdfSync, randomUUID } from 'node:crypto';
import { ConfigurationError } from '../core/errors/base.js';
import type { PaymentOrder, WebhookClaim, WebhookStore } from '../webhooks/stores/types.js';
import { laterRanks } from '../webhooks/lifecycle.js';
import { renewEveryMs } from '../webhooks/delivery-policy.js';
import { isMilliseconds, milliseconds } from '../core/milliseconds.js';
import { driveClient } from './topology.js';
import { CLAIM, COMPLETE, MAX_CLAIM_TTL_MS, RAISE_MARK } from './claim-scripts.js';
import { ClaimExpiries, untilAnswered } from './failover.js';
import { adaptClient, COMPARE_AND_DELETE, COMPARE_AND_PEXPIRE, type RedisCommands, type RedisStoreOptions } from './client.js';

function ttl(ms: number): string {
  return String(milliseconds(ms, 'ttlMs'));
}

/** The claim TTL a token of this store carries (`<ttl>:<uuid>`); 0 for any other. */
function ttlOf(token: string): number {
  const ms = Number(token.split(':', 1)[0]);
  return Number.isSafeInteger(ms) ? Math.min(ms, MAX_CLAIM_TTL_MS) : 0;
}

function claimTtl(ms: number): string {
  return ttl(Math.min(milliseconds(ms, 'ttlMs'), MAX_CLAIM_TTL_MS));
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
  waitForReplicas?:
    | {
        /** Replicas that must acknowledge each claim and completion (Redis `WAIT numreplicas`). @example 1 */
        readonly replicas: number;
        /** Milliseconds to wait for them before the write is reported as under-replicated (`WAIT timeout`). @example 200 */
        readonly timeoutMs: number;
      }
    | undefined;
  /**
   * Authenticates the ledger's own values: give the api key(s) the handler's verifier has.
   * Every key listed is accepted when reading; one is written (`writeWith`, by default the
   * last listed). The store derives its own key from each (HKDF-SHA256 over SHA-256 of the api
   * key, info `myr-gateway webhook-ledger v1`: never the signing key, and no key reaches Redis)
   * and writes `done:<mac>` and MAC'd per-payment high-water marks, so a `done` or a REFUNDED
   * mark written by anyone else is detected: replaced by the next claim and reported
   * (`foreign_value`) instead of suppressing fulfilment.
   *
   * Switch it on for the whole fleet at once: a process without it writes plain `done`,
   * which a process with it treats as foreign (the callback would run again). Rotating the
   * key takes two phases (docs/fleet.md): list `[newKey, oldKey]` everywhere (still writing
   * under the old key, which every instance reads), then, once every instance lists both,
   * `writeWith: newKey`; drop the old key only `completedTtlMs` after that.
   *
   * @example
   * ```ts
   * new RedisWebhookStore({ client, authenticateWith: process.env.MYR_API_KEY! });
   * ```
   *
   * @default undefined (values are checked for shape and TTL only; see docs/assumptions.md)
   */
  authenticateWith?: string | readonly string[] | undefined;
  /**
   * The api key, one of `authenticateWith`, whose MAC this store writes. Phase 2 of a key
   * rotation: set it to the new key only once every instance lists the new key, so no instance
   * meets a record it cannot read (it would take it for foreign and run the callback again).
   *
   * @example
   * ```ts
   * new RedisWebhookStore({ client, authenticateWith: [newKey, oldKey], writeWith: newKey });
   * ```
   *
   * @default the last key of `authenticateWith` (the one every instance of a rotation shares)
   */
  writeWith?: string | undefined;
}

/** The MAC keys derived from the api keys given, the one written first (none: plain values). */
function ledgerKeys(options: RedisWebhookStoreOptions): Buffer[] {
  const given = options.authenticateWith;
  const writeWith: unknown = options.writeWith;
  if (given === undefined) {
    if (writeWith !== undefined) throw new ConfigurationError('writeWith needs authenticateWith, the keys it is one of', 'writeWith');
    return [];
  }
  // unknown: a JavaScript caller may pass anything; the check below establishes string[].
  const apiKeys: unknown = typeof given === 'string' ? [given] : given;
  if (!isApiKeyList(apiKeys)) {
    throw new ConfigurationError('authenticateWith must be an api key or a non-empty list of them', 'authenticateWith');
  }
  // Written: the key every instance of a rotation already reads (the last), unless told.
  const written = writeWith === undefined ? apiKeys.length - 1 : apiKeys.findIndex((apiKey) => apiKey === writeWith);
  if (written < 0) throw new ConfigurationError('writeWith must be one of the authenticateWith keys', 'writeWith');
  const ordered = [apiKeys[written] as string, ...apiKeys.filter((_, index) => index !== written)]; // written is an index of apiKeys
  return ordered.map((apiKey) =>
    Buffer.from(hkdfSync('sha256', createHash('sha256').update(apiKey).digest(), Buffer.alloc(0), 'myr-gateway webhook-ledger v1', 32)),
  );
}

function isApiKeyList(value: unknown): value is readonly string[] {
  return Array.isArray(value) && value.length > 0 && value.every((key) => typeof key === 'string' && key.length > 0);
}

function replicaWait(options: RedisWebhookStoreOptions): [string, string, string] | undefined {
  const wait = options.waitForReplicas;
  if (wait === undefined) return undefined;
  const storeTimeout = options.timeoutMs ?? 1000;
  if (!Number.isInteger(wait.replicas) || wait.replicas < 1) {
    throw new ConfigurationError('waitForReplicas.replicas must be a whole number of at least 1', 'waitForReplicas');
  }
  if (!isMilliseconds(wait.timeoutMs, 1, storeTimeout - 1)) {
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
 * Fails closed: when Redis is down or slower than `timeoutMs`, a claim rejects with a
 * {@link RedisStoreError}, so the handler answers 503 and the gateway retries later; the
 * claim, should it stand all the same (a failover), is released once Redis answers. Nothing
 * is handled without a claim. A completion is retried while Redis does not answer, until its
 * claim would lapse (a failover takes seconds; docs/fleet.md), then once more in the background.
 *
 * Keys are `<keyPrefix>webhook:<idempotency key>` (a payment id and status, or a
 * webhook id); values are `inflight:<claim TTL>:<random token>` or `done`, always with a TTL.
 * A live claim is never shortened by another claimant's shorter TTL. No secret is stored. A value of any other shape (written by something else) is replaced
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
  /** Where the payments' high-water marks live: out of reach of every idempotency key (`<prefix>webhook:<key>`). */
  readonly #markPrefix: string;
  readonly #wait: [string, string, string] | undefined;
  readonly #macKeys: Buffer[];
  /** Whether the client is a Cluster client: then no script touches two keys. */
  readonly #cluster: boolean;
  /** When this process's live claims lapse: how long a completion may retry through a failover. */
  readonly #expiries = new ClaimExpiries();

  constructor(options: RedisWebhookStoreOptions) {
    const { redis, prefix } = adaptClient(options, 'RedisWebhookStore');
    this.#redis = redis;
    this.#prefix = `${prefix}webhook:`;
    this.#markPrefix = `${prefix}webhook-order:`;
    this.#wait = replicaWait(options);
    this.#macKeys = ledgerKeys(options);
    this.#cluster = /cluster/i.test(driveClient(options.client, 'RedisWebhookStore').kind);
  }

  async claim(key: string, ttlMs: number, order?: PaymentOrder): Promise<WebhookClaim> {
    // The claim written is capped; a run renews every third of ttlMs: a renewal that comes only
    // after the capped claim ended would let a retry take the key while the work still runs.
    if (renewEveryMs(milliseconds(ttlMs, 'inFlightTtlMs')) >= MAX_CLAIM_TTL_MS) {
      throw new ConfigurationError(`inFlightTtlMs must be below ${3 * MAX_CLAIM_TTL_MS} ms on RedisWebhookStore (it holds a claim at most ${MAX_CLAIM_TTL_MS} ms between renewals)`, 'inFlightTtlMs');
    }
    // The claim's TTL travels in its value, so another claimant can tell a live claim of this
    // store (never shortened) from a foreign one (claim-scripts.ts).
    const token = `${claimTtl(ttlMs)}:${randomUUID()}`;
    const value = `inflight:${token}`;
    const keys = this.#keys(key, order, true);
    const done = this.#values(keys[0] as string, 'done'); // #keys always returns the ledger key first
    // The later marks under the mark's key and under its legacy key (read, never written).
    const later = order ? [...this.#laterMarks(order, this.#orderKey(order)), ...this.#laterMarks(order, this.#legacyOrderKey(order))] : [];
    if (this.#cluster && order && later.length > 0) {
      const highest = await Promise.all([this.#orderKey(order), this.#legacyOrderKey(order)].map((k) => this.#redis.send(['GET', k])));
      // A missing callback key is what makes it superseded rather than done: ask, as the script would.
      if (highest.some((mark) => later.includes(String(mark))) && Number(await this.#redis.send(['EXISTS', keys[0] as string])) === 0) {
        return { acquired: false, state: 'superseded' };
      }
    }
    const reply = await this.#redis.eval(CLAIM, keys, [value, claimTtl(ttlMs), String(done.length), ...done, ...later]).catch((error: unknown) => {
      // The holder answers 503, yet the claim may stand: run before the answer was lost (and
      // replicated to the replica a failover promotes), or still held by the client and sent
      // once Redis is back. Release it once the client settled it, retried until Redis answers.
      this.#release(key, value, error, ttlMs);
      throw error;
    });
    if (reply === 1 || reply === 2) {
      this.#expiries.held(token, Number(claimTtl(ttlMs)));
      const replicated = await this.#replicated();
      const warning = reply === 2 ? 'foreign_value' : replicated ? undefined : 'under_replicated';
      return warning === undefined ? { acquired: true, token } : { acquired: true, token, warning };
    }
    if (reply === 'done') return { acquired: false, state: 'done' };
    if (reply === 'superseded') return { acquired: false, state: 'superseded' };
    return { acquired: false, state: 'in_flight' };
  }

  async complete(key: string, token: string, ttlMs: number, order?: PaymentOrder): Promise<boolean | 'under_replicated'> {
    const keys = this.#keys(key, order);
    // #keys returns the ledger key first; #values returns one value per key given.
    const marks = order ? [this.#values(this.#orderKey(order), String(order.rank))[0] as string, ...this.#laterMarks(order, this.#orderKey(order))] : [];
    const args = [`inflight:${token}`, ttl(ttlMs), this.#values(keys[0] as string, 'done')[0] as string, ...marks]; // see above
    // Retried while Redis does not answer (a failover takes seconds) and the claim still stands:
    // a finished run left unrecorded would run again on another instance once its claim lapsed.
    let failed = false;
    const attempt = () =>
      this.#redis.eval(COMPLETE, keys, args).catch((error: unknown) => {
        failed = true;
        throw error;
      });
    const reply = await untilAnswered(attempt, () => this.#expiries.expiresAt(token, ttlOf(token))).catch((error: unknown) => {
      // The claim may have lapsed meanwhile: recorded still once Redis answers, unless another
      // claim took the key (the script then leaves it), so the gateway's next delivery finds it done.
      // The expiry stays known: the caller's next attempts get one try each, not another wait.
      this.#redis.compensate(COMPLETE, keys, args, error, ttlOf(token));
      throw error;
    });
    this.#expiries.forget(token);
    // Held by something else after a failed attempt: that attempt may have recorded it after all.
    if (reply === 0 && failed && (await this.#redis.send(['GET', keys[0] as string])) === args[2]) return true;
    if (this.#cluster && order && reply !== 0) await this.#redis.eval(RAISE_MARK, [this.#orderKey(order)], [marks[0] as string, ttl(ttlMs), ...marks.slice(1)]); // non-empty: order is set
    if (reply !== 1) return false;
    return (await this.#replicated()) ? true : 'under_replicated';
  }

  async release(key: string, token: string): Promise<boolean> {
    this.#expiries.forget(token);
    const value = `inflight:${token}`;
    return (
      (await this.#redis.eval(COMPARE_AND_DELETE, [this.#prefix + key], [value]).catch((error: unknown) => {
        // Not left to block the gateway's retries for the rest of its TTL: released once Redis answers.
        this.#release(key, value, error, ttlOf(token));
        throw error;
      })) === 1
    );
  }

  /** Releases the claim `value` of `key` in the background, after `failure`'s write settled, for its TTL at most. */
  #release(key: string, value: string, failure: unknown, ttlMs: number): void {
    this.#redis.compensate(COMPARE_AND_DELETE, [this.#prefix + key], [value], failure, Math.min(ttlMs, MAX_CLAIM_TTL_MS));
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
    const held = (await this.#redis.eval(COMPARE_AND_PEXPIRE, [this.#prefix + key], [`inflight:${token}`, claimTtl(ttlMs)])) === 1;
    if (held) this.#expiries.held(token, Number(claimTtl(ttlMs)));
    return held;
  }

  /**
   * The script's keys: the idempotency key, and (given an order, off a Cluster) the payment's
   * high-water mark, then (`legacy`, for a claim) where it lived before.
   */
  #keys(key: string, order: PaymentOrder | undefined, legacy = false): string[] {
    if (order === undefined || this.#cluster) return [this.#prefix + key];
    return legacy ? [this.#prefix + key, this.#orderKey(order), this.#legacyOrderKey(order)] : [this.#prefix + key, this.#orderKey(order)];
  }

  #orderKey(order: PaymentOrder): string {
    return this.#markPrefix + order.paymentId;
  }

  /**
   * Where a payment's mark lived until it moved out of the idempotency keys' reach (a merchant's
   * `runOnce(store, 'order:<payment_id>')` met it there). Still read for a claim, never written,
   * so a REFUNDED handled before the upgrade keeps superseding its SUCCESS for the mark's 24 h.
   */
  #legacyOrderKey(order: PaymentOrder): string {
    return `${this.#prefix}order:${order.paymentId}`;
  }

  /**
   * What this store writes as `plain` under `redisKey`, under each ledger key (the first is the
   * one it writes): `plain` itself without `authenticateWith`, else `plain:<mac>`, the MAC bound
   * to the key so a value cannot be copied from another key.
   */
  #values(redisKey: string, plain: string): string[] {
    if (this.#macKeys.length === 0) return [plain];
    return this.#macKeys.map((k) => `${plain}:${createHmac('sha256', k).update(`${redisKey}\n${plain}`).digest('base64url').slice(0, 22)}`);
  }

  /** The high-water values, under `redisKey`, of statuses later than `order`'s, under every ledger key. */
  #laterMarks(order: PaymentOrder, redisKey: string): string[] {
    const marks: string[] = [];
    for (const rank of laterRanks(order.rank)) marks.push(...this.#values(redisKey, String(rank)));
    return marks;
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
