/**
 * The exactly-once ledger of the webhook handler on Redis: every process behind the
 * load balancer claims callbacks in one place.
 *
 * @module
 */
import { createHmac, randomUUID } from 'node:crypto';
import { ConfigurationError } from '../core/errors/base.js';
import type { PaymentOrder, WebhookClaim, WebhookStore } from '../webhooks/stores/types.js';
import { laterRanks } from '../webhooks/lifecycle.js';
import { renewEveryMs } from '../webhooks/delivery-policy.js';
import { milliseconds } from '../core/milliseconds.js';
import { driveClient } from './topology.js';
import { CLAIM, COMPLETE, MAX_CLAIM_TTL_MS, RAISE_MARK } from './claim-scripts.js';
import { ClaimExpiries, untilAnswered } from './failover.js';
import { adaptClient, COMPARE_AND_LET_GO, type RedisCommands } from './client.js';
import { ledgerKeys, paymentRecordTtl, replicaWait, type RedisWebhookStoreOptions } from './webhook-ledger-options.js';

/** Ends the token of a claim given its payment: its record is then kept `paymentRecordTtlMs` at least. */
const PAYMENT_CLAIM = ':payment';

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
 * `done` (a mark: the rank), always with a TTL. A handled payment (every claim given its `order`)
 * keeps its records and its mark `paymentRecordTtlMs` (30 days by default): a resend from the
 * gateway's dashboard within that window is a duplicate, a late SUCCESS after its REFUNDED
 * superseded.
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
  /** How long, at least, a payment's handled callbacks and its mark are kept (`paymentRecordTtlMs`). */
  readonly #paymentTtl: number;

  constructor(options: RedisWebhookStoreOptions) {
    const { redis, prefix } = adaptClient(options, 'RedisWebhookStore');
    this.#redis = redis;
    this.#prefix = `${prefix}webhook:`;
    this.#markPrefix = `${prefix}webhook-order:`;
    this.#lockPrefix = `${prefix}webhook-lock:`;
    this.#wait = replicaWait(options);
    this.#macKeys = ledgerKeys(options);
    this.#cluster = /cluster/i.test(driveClient(options.client, 'RedisWebhookStore').kind);
    this.#paymentTtl = paymentRecordTtl(options);
  }

  async claim(key: string, ttlMs: number, order?: PaymentOrder): Promise<WebhookClaim> {
    // The claim written is capped; a run renews every third of ttlMs: a renewal that comes only
    // after the capped claim ended would let a retry take the key while the work still runs.
    if (renewEveryMs(milliseconds(ttlMs, 'inFlightTtlMs')) >= MAX_CLAIM_TTL_MS) {
      throw new ConfigurationError(
        `inFlightTtlMs must be below ${3 * MAX_CLAIM_TTL_MS} ms on RedisWebhookStore (it holds a claim at most ${MAX_CLAIM_TTL_MS} ms between renewals)`,
        'inFlightTtlMs',
      );
    }
    // The claim's TTL travels in its value, so another claimant can tell a live claim of this
    // store (never shortened) from a foreign one (claim-scripts.ts).
    const ms = claimTtl(ttlMs);
    // A claim given its payment says so in its token, which its completion gets wherever it runs.
    const token = `${ms}:${randomUUID()}${order ? PAYMENT_CLAIM : ''}`;
    const value = `inflight:${token}`;
    // One payment's ordered callbacks run one at a time: the claim also takes the payment's lock.
    const lock = order && this.#lockKey(order);
    const keys = this.#keys(key, lock, order);
    const ledgerKey = keys[0] as string; // #keys always returns the ledger key first
    const done = this.#values(ledgerKey, 'done');
    const later = order ? this.#laterMarks(order, this.#orderKey(order)) : [];
    // The holder answers 503, yet a write whose answer was lost may stand: run before the answer
    // was lost (and replicated to the replica a failover promotes), or still held by the client
    // and sent once Redis is back. Released once the client settled it, retried until Redis answers.
    const undo = (taken: string[]) => (error: unknown) => {
      this.#undo(taken, token, error);
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
      if (
        await this.#markedLater(order, later)
          .then(async (marked) => marked && typeof (await own()) === 'number')
          .catch(undo([lock]))
      ) {
        await this.#free(lock, token);
        return refused('superseded');
      }
    }
    const reply = await this.#redis
      .eval(CLAIM, keys, [value, ms, String(done.length), ...done, ...later])
      .catch(undo(lock ? [ledgerKey, lock] : [ledgerKey]));
    if (reply === 1 || reply === 2) {
      this.#expiries.held(token, Number(ms), lock);
      const replicated = await this.#replicated();
      const warning = reply === 2 || locked === 2 ? 'foreign_value' : replicated ? undefined : 'under_replicated';
      return warning === undefined ? { acquired: true, token } : { acquired: true, token, warning };
    }
    if (this.#cluster && lock) await this.#free(lock, token);
    return refused(reply);
  }

  async complete(
    key: string,
    token: string,
    ttlMs: number,
    order?: PaymentOrder,
  ): Promise<boolean | 'under_replicated'> {
    // The payment lock its claim took, known to the process holding the claim (after a crash, the lock's TTL frees it).
    const lock = this.#expiries.lockOf(token) ?? (order && this.#lockKey(order));
    const keys = this.#keys(key, lock, order);
    const ledgerKey = keys[0] as string; // #keys always returns the ledger key first
    // #values returns one value per key given.
    const marks = order
      ? [
          this.#values(this.#orderKey(order), String(order.rank))[0] as string,
          ...this.#laterMarks(order, this.#orderKey(order)),
        ]
      : [];
    // A payment's record and its mark outlive the caller's TTL: a resend from the gateway's
    // dashboard is freshly signed, and only they stop it (paymentRecordTtlMs).
    const kept =
      order !== undefined || token.endsWith(PAYMENT_CLAIM)
        ? String(Math.max(Number(ttl(ttlMs)), this.#paymentTtl))
        : ttl(ttlMs);
    const args = [`inflight:${token}`, kept, this.#values(ledgerKey, 'done')[0] as string, ...marks];
    // Retried while Redis does not answer (a failover takes seconds) and the claim still stands:
    // a finished run left unrecorded would run again on another instance once its claim lapsed.
    let failed = false;
    const attempt = () =>
      this.#redis.eval(COMPLETE, keys, args).catch((error: unknown) => {
        failed = true;
        throw error;
      });
    const reply = await untilAnswered(attempt, () => this.#expiries.expiresAt(token, ttlOf(token))).catch(
      (error: unknown) => {
        // The claim may have lapsed meanwhile: recorded still once Redis answers, unless another
        // claim took the key (the script then leaves it), so the gateway's next delivery finds it done.
        // The expiry stays known: the caller's next attempts get one try each, not another wait.
        // On a Cluster the lock is left to its TTL: freed now, it would let another status of the
        // payment be claimed before this one is recorded and its mark raised.
        this.#redis.compensate(COMPLETE, keys, args, error, ttlOf(token));
        throw error;
      },
    );
    this.#expiries.forget(token);
    // Held by something else after a failed attempt: that attempt may have recorded it after all.
    const recorded = reply !== 0 || (failed && (await this.#redis.send(['GET', ledgerKey])) === args[2]);
    if (this.#cluster) {
      // The mark first, then the lock (off a Cluster, COMPLETE does both in its one step).
      if (order && recorded)
        await this.#redis.eval(RAISE_MARK, [this.#orderKey(order)], [marks[0] as string, kept, ...marks.slice(1)]); // non-empty: order is set
      if (lock) await this.#free(lock, token);
    }
    if (reply !== 1) return reply === 0 && recorded;
    return (await this.#replicated()) ? true : 'under_replicated';
  }

  async release(key: string, token: string): Promise<boolean> {
    const keys = this.#claimKeys(key, token);
    this.#expiries.forget(token);
    return this.#letGo(keys, [`inflight:${token}`]).catch((error: unknown) => {
      // Not left to block the gateway's retries for the rest of its TTL: released once Redis answers.
      this.#undo(keys, token, error);
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
    const held = await this.#letGo(this.#claimKeys(key, token), [`inflight:${token}`, claimTtl(ttlMs)]);
    if (held) this.#expiries.held(token, Number(claimTtl(ttlMs)));
    return held;
  }

  /**
   * COMPARE_AND_LET_GO (release, or renew given a TTL) on a claim's key and its payment's lock: one step off
   * a Cluster, else one per key, at once (their slots differ; the work they served has settled,
   * or still runs under both). Answers whether the claim still held its key.
   */
  async #letGo(keys: string[], args: string[]): Promise<boolean> {
    const replies = await Promise.all(
      this.#cluster
        ? keys.map((k) => this.#redis.eval(COMPARE_AND_LET_GO, [k], args))
        : [this.#redis.eval(COMPARE_AND_LET_GO, keys, args)],
    );
    return replies[0] === 1;
  }

  /** Releases the claim `token` of `keys` (a key, its payment's lock) in the background, after `failure`'s write settled, for its TTL at most. */
  #undo(keys: string[], token: string, failure: unknown): void {
    for (const step of this.#cluster ? keys.map((k) => [k]) : [keys])
      this.#redis.compensate(COMPARE_AND_LET_GO, step, [`inflight:${token}`], failure, ttlOf(token));
  }

  /** Frees a payment's `lock` if the claim `token` still holds it; should Redis not answer, in the background. */
  async #free(lock: string, token: string): Promise<void> {
    await this.#letGo([lock], [`inflight:${token}`]).catch((error: unknown) => this.#undo([lock], token, error));
  }

  /** The keys `token`'s claim holds: `key`, and the payment lock it took (unless it took none, or this process forgot it). */
  #claimKeys(key: string, token: string): string[] {
    const lock = this.#expiries.lockOf(token);
    return lock === undefined ? [this.#prefix + key] : [this.#prefix + key, lock];
  }

  /** On a Cluster, whether the payment's mark names a status later than `later`'s callback. */
  async #markedLater(order: PaymentOrder, later: string[]): Promise<boolean> {
    if (later.length === 0) return false;
    // MGET, not GET: a value of another type reads as no mark (as in the script), not as an error every claim would meet.
    const highest = await this.#redis.send(['MGET', this.#orderKey(order)]);
    return later.includes(String(highest)); // String([v]) is v
  }

  /** The scripts' keys: the idempotency key, then off a Cluster the payment's lock and (given an order) its high-water mark. */
  #keys(key: string, lock: string | undefined, order: PaymentOrder | undefined): string[] {
    const keys = [this.#prefix + key];
    if (this.#cluster || lock === undefined) return keys;
    keys.push(lock);
    if (order) keys.push(this.#orderKey(order));
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
   * What this store writes as `plain` under `redisKey`, under each ledger key (the first is the
   * one it writes): `plain` itself without `authenticateWith`, else `plain:<mac>`, the MAC bound
   * to the key so a value cannot be copied from another key.
   */
  #values(redisKey: string, plain: string): string[] {
    if (this.#macKeys.length === 0) return [plain];
    return this.#macKeys.map(
      (k) => `${plain}:${createHmac('sha256', k).update(`${redisKey}\n${plain}`).digest('base64url').slice(0, 22)}`,
    );
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
