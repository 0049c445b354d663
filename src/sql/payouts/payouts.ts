/**
 * `SqlPayouts`: a transactional outbox for withdrawals in the merchant's own database. A payout
 * is staged in the same transaction as the merchant's debit; a worker sends it and keeps asking
 * with the same reference until the service holds it; its final status settles it once. What a
 * request's failure means is `verdict.ts`; the sending is `worker.ts`; each dialect's SQL is
 * `src/sql/dialects/<dialect>/payout-statements.ts`.
 *
 * @module
 */
import { ConfigurationError } from '../../core/errors/base.js';
import { DuplicateReferenceError } from '../../core/errors/service.js';
import { referenceOf, tagReference } from '../../core/errors/reference.js';
import { milliseconds } from '../../core/milliseconds.js';
import { validateRequest } from '../../core/validate.js';
import { CURRENCY } from '../../schemas/common.js';
import { type WithdrawalCreateParams, withdrawalCreateParamsSchema } from '../../schemas/withdrawals.js';
import type { WebhookEvent } from '../../webhooks/events.js';
import type { SqlClient, SqlDialect } from '../sql-client.js';
import { earlierPayouts } from './lookup-verdict.js';
import { transactionOf, type Outbox } from './outbox.js';
import { checkSqliteSchema, checkTableName } from '../dialects/table-name.js';
import { payoutRow, payoutStatementsOf, type PayoutRow } from './rows.js';
import { sessionOf } from './session-of-tx.js';
import { stagedRow } from './staged-row.js';
import { ensureSchema, type EnsureSchemaOptions } from '../ensure-schema.js';
import type { PayoutInfo, PayoutSettleResult, SqlPayoutsOptions } from './options.js';
import { PayoutWorker } from './worker.js';
import type { PayoutGateway, PayoutWorkerOptions } from './worker-options.js';

/** The longest payouts table name: 63 characters (Postgres) less the `_requested` of its index's name. */
const MAX_TABLE_NAME = 53;

const finalState = (status: string): 'succeeded' | 'failed' => (status === 'SUCCESS' ? 'succeeded' : 'failed');

/**
 * Withdrawals exactly once, with the merchant's own debit: a transactional outbox in the
 * merchant's database (Postgres, MySQL 8/MariaDB 10.6+ or SQLite, through any adapter the ledger
 * has). `stage` records a payout in the merchant's transaction; a {@link SqlPayouts.worker} sends
 * it, asking again with the same `reference_id` after any doubt (a crash, a lost answer, a 5xx),
 * so the service holds one withdrawal; `settle` (callback) or the worker's status lookup settles
 * it once, running `onSettled` in the transaction that records it.
 *
 * @example
 * ```ts
 * const payouts = new SqlPayouts(fromPg(pool), {
 *   onRefused: async (refusal, { tx }) => creditBack(tx, refusal.referenceId),
 *   onSettled: async (settlement, { tx }) => (settlement.state === 'failed' ? creditBack(tx, settlement.referenceId) : markPaid(tx, settlement.referenceId)),
 * });
 * await payouts.ensureSchema();
 * await payouts.transaction(async ({ tx }) => {
 *   await tx.query('UPDATE wallets SET balance = balance - $1 WHERE seller = $2', [250, seller]);
 *   await payouts.stage(tx, { amount: '250.00', reference_id: 'PAYOUT7781', bank_code: 'PBBEMYKL', account_number, account_name });
 * });
 * payouts.worker(new MyrGateway(), { intervalMs: 1000 }).start();
 * ```
 */
export class SqlPayouts<Tx> {
  /** The table's name, as checked. */
  readonly table: string;
  readonly #outbox: Outbox<Tx>;

  constructor(client: SqlClient<Tx>, options: SqlPayoutsOptions<Tx>) {
    if (typeof client !== 'object' || client === null || typeof client.begin !== 'function') {
      throw new ConfigurationError(
        'SqlPayouts takes a client built by fromPg, fromPostgresJs, fromMysql2, fromKysely, fromDrizzle, fromPrisma or fromSqlite',
        'client',
      );
    }
    const { onRefused, onSettled } = options ?? {};
    if (typeof onRefused !== 'function')
      throw new ConfigurationError('SqlPayouts needs onRefused: a refused payout must be credited back', 'onRefused');
    if (typeof onSettled !== 'function')
      throw new ConfigurationError('SqlPayouts needs onSettled: a failed payout must be credited back', 'onSettled');
    const name = checkTableName(options.table ?? 'myr_payouts');
    if (client.dialect === 'sqlite') checkSqliteSchema(name);
    // `_pace` and `_requested` are added to it: Postgres cuts a name past 63 characters, MySQL refuses one past 64.
    if (name.bare.length > MAX_TABLE_NAME)
      throw new ConfigurationError(
        `the payouts table's name must be at most ${MAX_TABLE_NAME} characters: the outbox adds _pace and _requested to it for its other table and index`,
        'table',
      );
    this.table = name.qualified;
    this.#outbox = {
      client,
      sql: payoutStatementsOf(client.dialect),
      table: this.table,
      lockTimeoutMs: milliseconds(options.lockTimeoutMs ?? 5000, 'lockTimeoutMs'),
      onRefused,
      onSettled,
    };
  }

  /**
   * Creates the outbox's tables and indexes if they do not exist (`create`, the default; on
   * Postgres under an advisory lock on the table's name, so several processes may run it at once),
   * then checks both tables (the payouts' and `<table>_pace`) are the ones the outbox needs: every
   * column, of a type that holds what it writes (a 53-bit `claim_id`, ms times, a 100-character
   * reference; on MySQL the reference compared byte for byte), NOT NULL where it must be, the
   * primary keys. A table that is missing or differs is a `ConfigurationError` (field `table`)
   * naming each difference and the statement that fixes it, before any payout is staged: a debit
   * committed beside a payout the worker could never write would never be paid. Where your
   * migration tool owns the tables ({@link SqlPayouts.schemaSql} in a migration), call it with
   * `{ create: false }` at start-up: it only checks, and needs no right to create anything.
   *
   * @throws `ConfigurationError` when a table is missing or differs, or `create` is not a boolean.
   *
   * @example
   * ```ts
   * await payouts.ensureSchema(); // creates the tables if absent, then checks them
   * await payouts.ensureSchema({ create: false }); // checks the tables your migrations made
   * ```
   */
  async ensureSchema(options: EnsureSchemaOptions = {}): Promise<void> {
    const { client, sql, table } = this.#outbox;
    const { bare } = checkTableName(table);
    const tables = sql.tables(table, bare);
    await ensureSchema(client, { owner: 'the payout outbox', schema: sql.schema(table, bare), tables }, options);
    // The pace's one row is what claims lock to take turns: without it, workers in different
    // processes would not share the withdrawal limit.
    const paced = await transactionOf(
      this.#outbox,
      async (session) => (await session.query(sql.paceLock.text(table), sql.paceLock.params({}))).rows.length,
    );
    if (paced !== 1) {
      const insert = sql.schema(table, bare).at(-1) ?? '';
      throw new ConfigurationError(
        `the payout outbox's table ${table}_pace has no row 1, which workers lock to take turns under the withdrawal limit: add it with ${insert};`,
        'table',
      );
    }
  }

  /**
   * The DDL of the outbox's table for a migration tool, in `dialect` (default: this client's).
   *
   * @example
   * ```ts
   * writeFileSync('migrations/002_myr_payouts.sql', payouts.schemaSql('postgres'));
   * ```
   */
  schemaSql(dialect: SqlDialect = this.#outbox.client.dialect): string {
    if (dialect !== 'postgres' && dialect !== 'mysql' && dialect !== 'sqlite') {
      throw new ConfigurationError(
        `schemaSql takes 'postgres', 'mysql' or 'sqlite' (got ${String(dialect)})`,
        'dialect',
      );
    }
    return this.#schema(dialect)
      .map((statement) => `${statement};\n`)
      .join('');
  }

  #schema(dialect: SqlDialect): readonly string[] {
    return payoutStatementsOf(dialect).schema(this.table, checkTableName(this.table).bare);
  }

  /**
   * Runs `work` in one transaction of this client, committed when it returns and rolled back when
   * it throws; its `tx` (the merchant's own client type) takes `stage`.
   *
   * @example
   * ```ts
   * await payouts.transaction(async ({ tx }) => {
   *   await debit(tx, seller, 250);
   *   await payouts.stage(tx, params);
   * });
   * ```
   */
  async transaction<T>(work: (context: { readonly tx: Tx }) => T | Promise<T>): Promise<T> {
    return transactionOf(this.#outbox, (session) => work({ tx: session.tx }));
  }

  /**
   * Stages a payout in the merchant's open transaction: it is sent only if that transaction
   * commits. `tx` is the one {@link SqlPayouts.transaction} hands out, or the ledger's `tx` in a
   * webhook's `onEvent` or `runOnce` on the same database. Validated with `withdrawals.create`'s
   * rules before anything is written.
   *
   * @throws `InvalidRequestError` for bad params (the transaction should roll back).
   * @throws `DuplicateReferenceError` when the reference is already staged (nothing written).
   * @throws `ConfigurationError` when `tx` is not an open transaction's.
   *
   * @example
   * ```ts
   * await payouts.stage(tx, { amount: '250.00', reference_id: 'PAYOUT7781', bank_code: 'PBBEMYKL', account_number: '5140123456789', account_name: 'Tan Wei Ming' });
   * ```
   */
  async stage(tx: Tx, params: WithdrawalCreateParams): Promise<void> {
    const referenceId = referenceOf(params);
    let request: WithdrawalCreateParams;
    try {
      const validated = validateRequest(withdrawalCreateParamsSchema, params, 'withdrawal create');
      request = {
        ...validated,
        amount: params.amount,
        currency: validated.currency ?? CURRENCY,
        method: validated.method ?? 'BANK',
      };
    } catch (error) {
      throw tagReference(error, referenceId);
    }
    const session = sessionOf(tx);
    if (session === undefined) {
      throw new ConfigurationError(
        "stage takes the tx of an open transaction: payouts.transaction's, or the ledger's in onEvent or runOnce",
        'tx',
      );
    }
    const { sql, table } = this.#outbox;
    const values = stagedRow(request, Date.now());
    const { affected } = await session.query(sql.stage.text(table), sql.stage.params(values));
    if (affected !== 1) {
      throw new DuplicateReferenceError(
        `DUPLICATE_REFERENCE: a payout with reference_id ${request.reference_id} is already staged; nothing was staged`,
        {
          code: 'DUPLICATE_REFERENCE',
          referenceId: request.reference_id,
        },
      );
    }
  }

  /**
   * Settles a payout by its withdrawal callback, in the webhook run's transaction (`tx` is the
   * ledger's): moves it to `succeeded` or `failed` and runs `onSettled` there, once. Answers
   * `'already'` when it was settled before (by an earlier callback or a status lookup), and
   * `'unknown'` when no sent payout has the callback's reference and amount (not a payout of
   * this outbox, or a deposit), or the withdrawal is an earlier payout's under the same reference
   * (another service id than the payout's answer named, or completed a day or more before the
   * payout was staged while its id is unknown: assumption A29).
   *
   * @example
   * ```ts
   * onEvent: async (event, { tx }) => {
   *   if (event.transaction_type === 'WITHDRAWAL') await payouts.settle(event, { tx });
   * }
   * ```
   */
  async settle(event: WebhookEvent, context: { readonly tx: Tx }): Promise<PayoutSettleResult> {
    const session = sessionOf(context?.tx);
    if (session === undefined) throw new ConfigurationError("settle takes the ledger's tx of the callback's run", 'tx');
    if (event.transaction_type !== 'WITHDRAWAL') return 'unknown';
    const { sql, table } = this.#outbox;
    const { reference_id: referenceId, status, payment_id: paymentId, amount } = event.signed;
    const found = (await session.query(sql.lock.text(table), sql.lock.params({ referenceId }))).rows[0];
    if (found === undefined) return 'unknown';
    const row = payoutRow(found);
    // Another withdrawal than the one the payout's answer named (an earlier payout's, under a
    // reference used again) is not this payout's.
    if (Number(row.amount) !== Number(amount) || (row.paymentId !== undefined && row.paymentId !== paymentId))
      return 'unknown';
    // Completed a day or more before this payout was staged (A29): an earlier payout's, resent.
    if (earlierPayouts(row, event.signed.completed_at)) return 'unknown';
    if (row.state === 'succeeded' || row.state === 'failed' || row.state === 'refused') return 'already';
    if (row.state === 'staged') return 'unknown';
    const state = finalState(status);
    const { affected } = await session.query(
      sql.settle.text(table),
      sql.settle.params({ referenceId, state, paymentId, now: Date.now() }),
    );
    if (affected !== 1) return 'already';
    await this.#outbox.onSettled(
      { referenceId, amount: row.amount, state, status, paymentId, via: 'callback' },
      { tx: context.tx },
    );
    return 'settled';
  }

  /**
   * What is known of one payout, or undefined when none has this reference. Never its account
   * number.
   *
   * @example
   * ```ts
   * const payout = await payouts.get('PAYOUT7781'); // { referenceId, state: 'sent', paymentId: 'WD_…', attempts: 1 }
   * ```
   */
  async get(referenceId: string): Promise<PayoutInfo | undefined> {
    const { sql, table } = this.#outbox;
    const found = await transactionOf(
      this.#outbox,
      async (session) => (await session.query(sql.read.text(table), sql.read.params({ referenceId }))).rows[0],
    );
    if (found === undefined) return undefined;
    return infoOf(payoutRow(found));
  }

  /**
   * A worker that sends this outbox's staged payouts through `gateway` and settles those no
   * callback settled in time. One per process; many processes share the table.
   *
   * @example
   * ```ts
   * const worker = payouts.worker(new MyrGateway(), { intervalMs: 1000, settleAfterMs: 600_000 });
   * worker.start();
   * process.on('SIGTERM', () => void worker.stop());
   * ```
   */
  worker(gateway: PayoutGateway, options: PayoutWorkerOptions = {}): PayoutWorker<Tx> {
    return new PayoutWorker(this.#outbox, gateway, options);
  }
}

/** What `get` shows of a row. */
function infoOf(row: PayoutRow): PayoutInfo {
  return {
    referenceId: row.referenceId,
    state: row.state,
    ...(row.paymentId === undefined ? {} : { paymentId: row.paymentId }),
    attempts: row.attempts,
    ...(row.lastError === undefined ? {} : { lastError: row.lastError }),
  };
}
