/**
 * The idempotency store behind exactly-once callback handling.
 *
 * Three operations, each a single atomic step on one key, so that a shared store
 * (Redis, a SQL table, DynamoDB) can implement them without transactions:
 *
 * | operation | Redis | meaning |
 * |---|---|---|
 * | `claim(key, ttlMs)` | `SET key "inflight:<token>" NX PX ttlMs`, then `GET key` when it failed | take the key if nobody holds it |
 * | `complete(key, token, ttlMs)` | Lua: if `GET key` is ours (or gone), `SET key "done" PX ttlMs`; answer whether it was ours | the handler finished: remember it |
 * | `release(key, token)` | Lua: if `GET key` is ours, `DEL key`; answer whether it was | the handler failed: let a retry take it |
 * | `renew(key, token, ttlMs)` (optional) | Lua: if `GET key` is ours, `PEXPIRE key ttlMs`, answer 1, else 0 | the handler still runs: keep the claim |
 *
 * The token makes `complete` and `release` safe when a claim outlived its TTL and a
 * second worker took the key: the first worker can then no longer touch it. `complete`,
 * `release` and `renew` answer `false` when the key was no longer the caller's (expired,
 * taken by another token, or lost by the store), and the handler reports a
 * `ClaimLostError` (`CLAIM_LOST`): the handler may have run twice. A store whose
 * `complete` or `release` resolves to nothing (`void`) is still accepted; it only loses
 * that report.
 *
 * @module
 */

/**
 * Something a store noticed about its own ledger that the handler reports (through `onError`
 * and its logger) without changing its answer:
 *
 * - `foreign_value`: the key held a value this store never writes (or one without a TTL);
 *   it was replaced by this claim rather than left to suppress or block the callback.
 * - `under_replicated`: fewer replicas than asked acknowledged the write in time (Redis
 *   `WAIT`), so a failover now could lose it.
 */
export type LedgerWarning = 'foreign_value' | 'under_replicated';

/**
 * Where a callback stands in its payment's life, passed to `claim` and `complete` so a store
 * can keep a per-payment high-water mark: the highest `rank` completed for `paymentId`
 * (written with `complete`, atomically). A claim whose `rank` is below it answers
 * `superseded`. Optional for custom stores: one that ignores it never answers `superseded`.
 *
 * @example
 * ```ts
 * await store.claim('payment:PAY_1:SUCCESS', 4_000, { paymentId: 'PAY_1', rank: lifecycleRank('SUCCESS') });
 * ```
 */
export interface PaymentOrder {
  /** The signed `payment_id`. */
  readonly paymentId: string;
  /** The status's place in the payment's life (`lifecycleRank`). */
  readonly rank: number;
}

/** The answer to {@link WebhookStore.claim}. */
export type WebhookClaim =
  /** The caller holds the key until it completes or releases it, or `ttlMs` passes. */
  | {
      /** The key is yours. */
      readonly acquired: true;
      /** Proof of the claim, for `complete` and `release`. */
      readonly token: string;
      /** What the store noticed while claiming, for the handler to report. */
      readonly warning?: LedgerWarning | undefined;
    }
  /** Somebody else holds the key (`in_flight`), or it was already handled (`done`). */
  | {
      /** The key is not yours. */
      readonly acquired: false;
      /**
       * `in_flight`: being handled elsewhere (answer 409); `done`: handled (answer 200);
       * `superseded`: a later status of the same payment was handled (answer 200, not run).
       */
      readonly state: 'in_flight' | 'done' | 'superseded';
    };

/**
 * An async store of idempotency keys. Implement it over a shared database when more
 * than one process receives callbacks.
 *
 * @example
 * ```ts
 * // A sketch over ioredis
 * const redisStore: WebhookStore = {
 *   async claim(key, ttlMs) {
 *     const token = crypto.randomUUID();
 *     if (await redis.set(key, `inflight:${token}`, 'PX', ttlMs, 'NX')) return { acquired: true, token };
 *     const value = await redis.get(key);
 *     return { acquired: false, state: value === 'done' ? 'done' : 'in_flight' };
 *   },
 *   async complete(key, token, ttlMs) { await redis.eval(COMPLETE_LUA, 1, key, `inflight:${token}`, ttlMs); },
 *   async release(key, token) { await redis.eval(RELEASE_LUA, 1, key, `inflight:${token}`); },
 * };
 * ```
 */
export interface WebhookStore {
  /** Absent (or `false`): a store that claims with a lease, not a {@link TransactionalWebhookStore}. */
  readonly transactional?: false | undefined;
  /**
   * Atomically takes `key` for `ttlMs` milliseconds if nobody holds it and it is not
   * done (or its record expired), and (given `order`) no later status of the payment was
   * completed (else `superseded`) and no other claim of the same payment is held (else
   * `in_flight`): given `order`, the claim also takes the payment for as long as it holds the
   * key (renewed by `renew`, given back by `complete` and `release`), so one payment's
   * callbacks run one at a time and a SUCCESS never runs beside its REFUNDED.
   */
  claim(key: string, ttlMs: number, order?: PaymentOrder): Promise<WebhookClaim>;
  /**
   * Marks `key` done for `ttlMs` milliseconds, if `token` still holds it or nobody does.
   * A key held by another token (or already done) is left alone. Answers `true` when
   * `token` still held the key, `false` when it did not (even if the key was free and is
   * now recorded done): the claim was lost while the handler ran. `'under_replicated'`:
   * held and recorded, but fewer replicas than asked acknowledged it.
   *
   * @example
   * ```ts
   * if ((await store.complete(key, token, 86_400_000)) === false) alert('claim lost: the handler may have run twice');
   * ```
   */
  complete(
    key: string,
    token: string,
    ttlMs: number,
    order?: PaymentOrder,
  ): Promise<boolean | 'under_replicated' | void>;
  /**
   * Frees `key` if `token` still holds it, so the next delivery can take it. Answers
   * `false` when `token` no longer held it (the claim was lost while the handler ran).
   *
   * @example
   * ```ts
   * await store.release(key, token);
   * ```
   */
  release(key: string, token: string): Promise<boolean | void>;
  /**
   * Extends the claim of `token` on `key` to `ttlMs` milliseconds from now, while the
   * handler still runs. Answers false when `token` no longer holds the key (it expired,
   * or another worker took it); never takes a key that is free.
   *
   * Optional: a store without it still works, but a handler that runs longer than
   * `inFlightTtlMs` then loses its claim and a retry may run it a second time.
   *
   * @example
   * ```ts
   * const RENEW = `if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('PEXPIRE', KEYS[1], ARGV[2]) end
   * return 0`;
   * async renew(key, token, ttlMs) { return (await redis.eval(RENEW, 1, key, `inflight:${token}`, ttlMs)) === 1; }
   * ```
   */
  renew?(key: string, token: string, ttlMs: number): Promise<boolean>;
}

/**
 * What one transactional run came to (the ledger rolled back everything but `processed`).
 *
 * @example
 * ```ts
 * const run: LedgerRun<void> = { outcome: 'duplicate' };
 * ```
 */
export type LedgerRun<T> =
  /** The work ran and committed with the done mark. */
  | {
      /** `'processed'`: the work ran here and committed. */
      readonly outcome: 'processed';
      /** What the work returned. */
      readonly value: T;
    }
  /** Done before, a later status of the payment was handled, or running elsewhere: the work did not run. */
  | {
      /** `'duplicate'`, `'superseded'` or `'in_flight'`: the work did not run. */
      readonly outcome: 'duplicate' | 'superseded' | 'in_flight';
    }
  /** The work threw: rolled back. */
  | {
      /** `'failed'`: the work threw and was rolled back. */
      readonly outcome: 'failed';
      /** What the work threw. */
      readonly error: unknown;
    }
  /** The work outlived `timeoutMs`: rolled back, never committed. */
  | {
      /** `'timed_out'`: rolled back, never committed. */
      readonly outcome: 'timed_out';
      /** What the store could tell of why the work was stuck: the log line's and `onError`'s message (no secret). */
      readonly message?: string | undefined;
    }
  /** The database failed, or COMMIT's outcome is unknown. */
  | {
      /** `'unavailable'`: the database failed, or COMMIT's outcome is unknown. */
      readonly outcome: 'unavailable';
      /** The database's error. */
      readonly error: unknown;
      /**
       * What failed, told by the store: the database's own code and message (masked of secrets)
       * and the table, for the log line's and `onError`'s message.
       */
      readonly message?: string | undefined;
    };

/**
 * A store that claims, runs the work with its transaction, and records completion in ONE
 * transaction: the claim, the merchant's writes through `tx` and the done mark commit together,
 * or none of them does. The webhook handler and `runOnce` hand it the whole run (no lease, no
 * renewal): `onEvent(event, { key, tx })` and `runOnce(store, key, ({ tx }) => …)` get its `tx`.
 *
 * @example
 * ```ts
 * const handler = createWebhookHandler({
 *   verifier: { apiKey },
 *   store: ledger, // a TransactionalWebhookStore<PoolClient>
 *   onEvent: (event, { tx }) => tx.query("UPDATE orders SET status = 'paid' WHERE reference_id = $1", [event.signed.reference_id]),
 * });
 * ```
 */
export interface TransactionalWebhookStore<Tx = unknown> {
  /** Always `true`: tells it apart from a {@link WebhookStore}. */
  readonly transactional: true;
  /**
   * Runs `work` once per `key`, in one transaction with the claim and the done mark.
   *
   * @example
   * ```ts
   * const run = await ledger.run('payment:PAY_1:SUCCESS', (tx) => fulfil(tx), { raiseMark: false, completedTtlMs: 86_400_000 });
   * ```
   */
  run<T>(
    key: string,
    work: (tx: Tx) => T | Promise<T>,
    options: {
      /** The payment's place in its life, for the superseded check. */
      readonly order?: PaymentOrder | undefined;
      /** `canSupersede(status)`: write the payment's high-water mark with the done mark. */
      readonly raiseMark: boolean;
      /** `handlerTimeoutMs` (undefined for `runOnce`: no limit). */
      readonly timeoutMs?: number | undefined;
      /** How long the done mark is kept, in ms. */
      readonly completedTtlMs: number;
    },
  ): Promise<LedgerRun<T>>;
}
