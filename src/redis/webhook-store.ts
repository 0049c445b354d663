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
import { adaptClient, COMPARE_AND_LET_GO, type RedisCommands, type RedisStoreOptions } from './client.js';

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

/** A claim not taken, from the claim script's answer: 'done', 'superseded', or held (in flight). */
function refused(reply: unknown): WebhookClaim {
  return { acquired: false, state: reply === 'done' || reply === 'superseded' ? reply : 'in_flight' };
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
 * the handler once. Claim and complete are one round trip each (a Lua script; a few on a
 * Cluster, docs/fleet.md); complete, release and renew only touch a key the caller's claim
 * still holds, and answer `false` when it no longer did (the handler then reports `CLAIM_LOST`).
 * A claim given its payment (`order`) also takes the payment's lock, held as long as the claim:
 * one payment's callbacks run one at a time, and another status of it meanwhile is `in_flight`.
 *
 * Fails closed: when Redis is down or slower than `timeoutMs`, a claim rejects with a
 * {@link RedisStoreError}, so the handler answers 503 and the gateway retries later; the
 * claim, should it stand all the same (a failover), is released once Redis answers. Nothing
 * is handled without a claim. A completion is retried while Redis does not answer, until its
 * claim would lapse (a failover takes seconds; docs/fleet.md), then once more in the background.
 *
 * Keys are `<keyPrefix>webhook:<idempotency key>` (a payment id and status, or a
 * webhook id), and `<keyPrefix>webhook-lock:<payment id>`, `<keyPrefix>webhook-order:<payment id>`
 * for a payment's lock and high-water mark; values are `inflight:<claim TTL>:<random token>` or
 * `done` (a mark: the rank), always with a TTL.
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
  /** Where the payments' in-flight locks live, as far from the idempotency keys. */
  readonly #lockPrefix: string;
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
    this.#lockPrefix = `${prefix}webhook-lock:`;
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
    const ms = claimTtl(ttlMs);
    const token = `${ms}:${randomUUID()}`;
    const value = `inflight:${token}`;
    // One payment's ordered callbacks run one at a time: the claim also takes the payment's lock.
    const lock = order && this.#lockKey(order);
    const keys = this.#keys(key, lock, order, true);
    const ledgerKey = keys[0] as string; // #keys always returns the ledger key first
    const done = this.#values(ledgerKey, 'done');
    // The later marks under the mark's key and under its legacy key (read, never written).
    const later = order ? [...this.#laterMarks(order, this.#orderKey(order)), ...this.#laterMarks(order, this.#legacyOrderKey(order))] : [];
    // The holder answers 503, yet a write whose answer was lost may stand: run before the answer
    // was lost (and replicated to the replica a failover promotes), or still held by the client
    // and sent once Redis is back. Released once the client settled it, retried until Redis answers.
    const undo = (taken: string[]) => (error: unknown) => {
      this.#undo(taken, value, error, ttlMs);
      throw error;
    };
    let locked: unknown = 1;
    if (this.#cluster && order && lock) {
      // The lock is in its own slot: taken first, in its own step, by the same script. Safe in
      // this order: a claim holds its payment's lock before it can hold its key, so two statuses
      // of one payment never both run; one that then does not get its key frees the lock, having
      // held it off for a moment at most (the other status is retried: late, never beside it).
      // The mark is read only under the lock, which a REFUNDED frees only after raising it.
      locked = await this.#redis.eval(CLAIM, [lock], [value, ms, '0']).catch(undo([lock]));
      // What the callback's own key holds, read only: a number when no live record of this store (the script's rule).
      const own = () => this.#redis.eval(CLAIM, [ledgerKey], ['', ms, String(done.length), ...done]);
      if (locked !== 1 && locked !== 2) {
        // Another status of the payment runs; this callback's own record and the mark come first.
        const record = await own();
        return refused(typeof record === 'number' && (await this.#markedLater(order, later)) ? 'superseded' : record);
      }
      if (await this.#markedLater(order, later).then(async (marked) => marked && typeof (await own()) === 'number').catch(undo([lock]))) {
        await this.#free(lock, value, ttlMs);
        return refused('superseded');
      }
    }
    const reply = await this.#redis.eval(CLAIM, keys, [value, ms, String(done.length), ...done, ...later]).catch(undo(lock ? [ledgerKey, lock] : [ledgerKey]));
    if (reply === 1 || reply === 2) {
      this.#expiries.held(token, Number(ms), lock);
      const replicated = await this.#replicated();
      const warning = reply === 2 || locked === 2 ? 'foreign_value' : replicated ? undefined : 'under_replicated';
      return warning === undefined ? { acquired: true, token } : { acquired: true, token, warning };
    }
    if (this.#cluster && lock) await this.#free(lock, value, ttlMs);
    return refused(reply);
  }

  async complete(key: string, token: string, ttlMs: number, order?: PaymentOrder): Promise<boolean | 'under_replicated'> {
    // The payment lock its claim took, known to the process holding the claim (after a crash, the lock's TTL frees it).
    const lock = this.#expiries.lockOf(token) ?? (order && this.#lockKey(order));
    const keys = this.#keys(key, lock, order);
    const ledgerKey = keys[0] as string; // #keys always returns the ledger key first
    // #values returns one value per key given.
    const marks = order ? [this.#values(this.#orderKey(order), String(order.rank))[0] as string, ...this.#laterMarks(order, this.#orderKey(order))] : [];
    const args = [`inflight:${token}`, ttl(ttlMs), this.#values(ledgerKey, 'done')[0] as string, ...marks];
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
      // On a Cluster the lock is left to its TTL: freed now, it would let another status of the
      // payment be claimed before this one is recorded and its mark raised.
      this.#redis.compensate(COMPLETE, keys, args, error, ttlOf(token));
      throw error;
    });
    this.#expiries.forget(token);
    // Held by something else after a failed attempt: that attempt may have recorded it after all.
    const recorded = reply !== 0 || (failed && (await this.#redis.send(['GET', ledgerKey])) === args[2]);
    if (this.#cluster) {
      // The mark first, then the lock (off a Cluster, COMPLETE does both in its one step).
      if (order && recorded) await this.#redis.eval(RAISE_MARK, [this.#orderKey(order)], [marks[0] as string, ttl(ttlMs), ...marks.slice(1)]); // non-empty: order is set
      if (lock) await this.#free(lock, args[0] as string, ttlOf(token));
    }
    if (reply !== 1) return reply === 0 && recorded;
    return (await this.#replicated()) ? true : 'under_replicated';
  }

  async release(key: string, token: string): Promise<boolean> {
    const keys = [this.#prefix + key, ...this.#lockOf(token)];
    this.#expiries.forget(token);
    const value = `inflight:${token}`;
    return this.#letGo(keys, [value]).catch((error: unknown) => {
      // Not left to block the gateway's retries for the rest of its TTL: released once Redis answers.
      this.#undo(keys, value, error, ttlOf(token));
      throw error;
    });
  }

  /**
   * Extends a claim the caller still holds (and its payment's lock) by `ttlMs`, for handlers
   * that may outlive the handler's `inFlightTtlMs`. False when `token` no longer holds `key`.
   *
   * @example
   * ```ts
   * const held = await store.renew(key, token, 4_000);
   * ```
   */
  async renew(key: string, token: string, ttlMs: number): Promise<boolean> {
    const held = await this.#letGo([this.#prefix + key, ...this.#lockOf(token)], [`inflight:${token}`, claimTtl(ttlMs)]);
    if (held) this.#expiries.held(token, Number(claimTtl(ttlMs)));
    return held;
  }

  /**
   * COMPARE_AND_LET_GO (release, or renew given a TTL) on a claim's key and its payment's lock: one step off
   * a Cluster, else one per key, at once (their slots differ; the work they served has settled,
   * or still runs under both). Answers whether the claim still held its key.
   */
  async #letGo(keys: string[], args: string[]): Promise<boolean> {
    const replies = await Promise.all(this.#cluster ? keys.map((k) => this.#redis.eval(COMPARE_AND_LET_GO, [k], args)) : [this.#redis.eval(COMPARE_AND_LET_GO, keys, args)]);
    return replies[0] === 1;
  }

  /** Releases the claim `value` of `keys` (a key, its payment's lock) in the background, after `failure`'s write settled, for its TTL at most. */
  #undo(keys: string[], value: string, failure: unknown, ttlMs: number): void {
    for (const step of this.#cluster ? keys.map((k) => [k]) : [keys]) this.#redis.compensate(COMPARE_AND_LET_GO, step, [value], failure, Math.min(ttlMs, MAX_CLAIM_TTL_MS));
  }

  /** Frees a payment's `lock` if the claim `value` still holds it; should Redis not answer, in the background. */
  async #free(lock: string, value: string, ttlMs: number): Promise<void> {
    await this.#redis.eval(COMPARE_AND_LET_GO, [lock], [value]).catch((error: unknown) => this.#undo([lock], value, error, ttlMs));
  }

  /** The payment lock `token`'s claim took, as a list of keys (none when it took none, or this process forgot it). */
  #lockOf(token: string): string[] {
    const lock = this.#expiries.lockOf(token);
    return lock === undefined ? [] : [lock];
  }

  /** On a Cluster, whether the payment's mark (or its legacy key) names a status later than `later`'s callback. */
  async #markedLater(order: PaymentOrder, later: string[]): Promise<boolean> {
    if (later.length === 0) return false;
    // MGET, not GET: a value of another type reads as no mark (as in the script), not as an error every claim would meet.
    const highest = await Promise.all([this.#orderKey(order), this.#legacyOrderKey(order)].map((k) => this.#redis.send(['MGET', k])));
    return highest.some((mark) => later.includes(String(mark))); // String([v]) is v
  }

  /**
   * The scripts' keys: the idempotency key, then off a Cluster the payment's lock and (given an
   * order) its high-water mark, then (`legacy`, for a claim) where the mark lived before.
   */
  #keys(key: string, lock: string | undefined, order: PaymentOrder | undefined, legacy = false): string[] {
    const keys = [this.#prefix + key];
    if (this.#cluster || lock === undefined) return keys;
    keys.push(lock);
    if (order) keys.push(this.#orderKey(order));
    if (order && legacy) keys.push(this.#legacyOrderKey(order));
    return keys;
  }

  /** Where a payment's lock lives: out of reach of every idempotency key, like its mark. */
  #lockKey(order: PaymentOrder): string {
    return this.#lockPrefix + order.paymentId;
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
