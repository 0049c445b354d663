/**
 * The callback ledger in the merchant's own database: the claim of a key, the merchant's work
 * and the record that it was done commit in ONE transaction, or none of them does. What each
 * database answer becomes (duplicate, superseded, in flight, failed, timed out, unavailable) is
 * decided here; the SQL is its dialect's (`dialects/<dialect>/ledger-statements.ts`), the client's
 * driving is its adapter (`adapters/<driver>/`).
 *
 * @module
 */
import { ConfigurationError } from '../../core/errors/base.js';
import { milliseconds } from '../../core/milliseconds.js';
import type { LedgerRun, PaymentOrder, TransactionalWebhookStore } from '../../webhooks/stores/types.js';
import { runBudget, type RunBudget } from './run-budget.js';
import { aborted, constraintBroken, isConflict, sharedCommitLost, storeFailure } from '../database-errors.js';
import type { LedgerStatements, SqlDialect } from '../dialects/dialect.js';
import { ledgerStatementsOf } from '../dialects/ledger-statements-of.js';
import { checkSqliteSchema, checkTableName, type TableName } from '../dialects/table-name.js';
import type { SqlClient, SqlSession } from '../sql-client.js';
import { ensureSchema, type EnsureSchemaOptions } from '../ensure-schema.js';
import { claimKey, claimRowOf, paymentOfRun, UNCLEAR, type ClaimRequest } from './claim-key.js';
import { claimOf } from './claims.js';
import { pruneExpired, type PruneOptions } from './prune.js';
import { tracked } from '../payouts/session-of-tx.js';

/** Options of {@link SqlLedger}. */
export interface SqlLedgerOptions {
  /**
   * The ledger's table: an identifier, or `schema.table`, each `[a-z_][a-z0-9_]{0,62}` and not
   * a common SQL reserved word such as `order` or `user` (anything else is a ConfigurationError). It holds the handled keys and the payments' marks.
   *
   * @default 'myr_webhook_ledger'
   * @example
   * ```ts
   * new SqlLedger(fromPg(pool), { table: 'payments.webhook_ledger' });
   * ```
   */
  table?: string | undefined;
  /**
   * How long, in ms, a delivery waits for a key (or any row the handler writes) that another
   * transaction holds before it answers `in_flight` (409 with Retry-After): the duplicate of a
   * callback that is being handled right now. Set as the transaction's `lock_timeout`
   * (Postgres), `innodb_lock_wait_timeout` (MySQL, whole seconds, rounded up) or busy timeout
   * (SQLite).
   *
   * @default 1000
   * @example
   * ```ts
   * new SqlLedger(fromMysql2(pool), { lockTimeoutMs: 2_000 });
   * ```
   */
  lockTimeoutMs?: number | undefined;
}

/** Options of one {@link SqlLedger.run} (the webhook handler and `runOnce` pass them). */
export interface LedgerRunOptions {
  /**
   * The payment's place in its life: the run is `superseded` when a later status was handled.
   *
   * @default the payment a key of exactly `paymentKey`'s shape names (as `runOnce` reads it, a
   * REFUNDED then raising the mark whatever `raiseMark` says); none for any other key
   */
  readonly order?: PaymentOrder | undefined;
  /**
   * Raise the payment's high-water mark to `order.rank`, committed with the work (a REFUNDED: a
   * later SUCCESS is then superseded). The ledger writes the mark's row for every run with an
   * `order` all the same, for its lock: that row orders one payment's callbacks.
   */
  readonly raiseMark: boolean;
  /**
   * The most the run may take, in ms: acquiring a connection, the claim, the work and the COMMIT
   * each wait only what is left of it. Work that outlives it is rolled back (`timed_out`); a
   * database that does not answer in it makes the run `unavailable` (nothing acknowledged).
   */
  readonly timeoutMs?: number | undefined;
  /** How long the done record lasts, in ms. */
  readonly completedTtlMs: number;
}

/** A failed statement's outcome: in flight (another transaction holds the rows), or unavailable, told in the database's own words. */
const inFlightOrUnavailable = (error: unknown, table: string): LedgerRun<never> =>
  isConflict(error) ? { outcome: 'in_flight' } : { outcome: 'unavailable', error, message: storeFailure(error, table) };

export type { EnsureSchemaOptions } from '../ensure-schema.js';
export type { PruneOptions } from './prune.js';

/** What became of the work: its value, or what it threw. */
type Settled<T> = { readonly ok: true; readonly value: T } | { readonly ok: false; readonly error: unknown };

const settledOf = <T>(running: Promise<T>): Promise<Settled<T>> =>
  running.then(
    (value) => ({ ok: true as const, value }),
    (error: unknown) => ({ ok: false as const, error }),
  );

/**
 * An exactly-once callback ledger in the merchant's own SQL database (Postgres, MySQL/MariaDB or
 * SQLite), for `createWebhookHandler({ store })` and `runOnce`. Each run is one transaction:
 * claim the key, run the handler with the transaction (`tx`, the merchant's own client type),
 * mark it done, COMMIT. A crash, a thrown handler or a timeout rolls all of it back; a duplicate
 * finds the committed record. Writes made through `tx` are exactly once; anything else the
 * handler does (an email, an HTTP call, a write on another connection) is at least once.
 *
 * @example
 * ```ts
 * import pg from 'pg';
 * import { SqlLedger, fromPg } from 'myr-gateway/sql';
 *
 * const ledger = new SqlLedger(fromPg(new pg.Pool({ connectionString: process.env.DATABASE_URL })));
 * await ledger.ensureSchema();
 * ```
 */
export class SqlLedger<Tx> implements TransactionalWebhookStore<Tx> {
  /** Always `true`: the handler gives its work this ledger's transaction. */
  readonly transactional = true as const;
  /** The table's name, as checked. */
  readonly table: string;
  readonly #client: SqlClient<Tx>;
  readonly #lockTimeoutMs: number;
  readonly #name: TableName;
  readonly #sql: LedgerStatements;

  constructor(client: SqlClient<Tx>, options: SqlLedgerOptions = {}) {
    if (typeof client !== 'object' || client === null || typeof client.begin !== 'function') {
      throw new ConfigurationError(
        'SqlLedger takes a client built by fromPg, fromPostgresJs, fromMysql2, fromKysely, fromDrizzle, fromPrisma or fromSqlite',
        'client',
      );
    }
    this.#name = checkTableName(options.table ?? 'myr_webhook_ledger');
    if (client.dialect === 'sqlite') checkSqliteSchema(this.#name);
    this.table = this.#name.qualified;
    this.#client = client;
    this.#lockTimeoutMs = milliseconds(options.lockTimeoutMs ?? 1000, 'lockTimeoutMs');
    this.#sql = ledgerStatementsOf(client.dialect, this.#name, client.claimBeforeBegun === true);
  }

  /**
   * Claims `key`, runs `work` with the transaction and records it done, all in one transaction;
   * `processed` only once COMMIT returned. The webhook handler and `runOnce` call it.
   *
   * @example
   * ```ts
   * const run = await ledger.run('payment:PAY_1:SUCCESS', (tx) => fulfil(tx), { raiseMark: false, completedTtlMs: 86_400_000 });
   * ```
   */
  async run<T>(key: string, work: (tx: Tx) => T | Promise<T>, options: LedgerRunOptions): Promise<LedgerRun<T>> {
    const completedTtlMs = milliseconds(options.completedTtlMs, 'completedTtlMs');
    const asked = options.timeoutMs === undefined ? undefined : milliseconds(options.timeoutMs, 'timeoutMs');
    // A client may cap every run's time (SQLite: one writer, so a long run stalls every callback).
    const cap = this.#client.maxRunMs;
    const timeoutMs = cap === undefined ? asked : Math.min(asked ?? cap, cap);
    const { order, raiseMark } = paymentOfRun(key, options.order, options.raiseMark);
    const now = Date.now();
    const row = claimRowOf(this.#sql, key, order, this.#client.commitChecked === true);
    const claim = claimOf(key, now, completedTtlMs, row);
    const budget = runBudget(this.#client, timeoutMs);
    try {
      return await this.#runBounded(budget, { key, claim, now, order, raiseMark, beside: true }, work);
    } finally {
      budget.finish();
    }
  }

  /** One run within its budget: the claim, the work, the COMMIT (see {@link SqlLedger.run}); `again`: its second try, after a shared COMMIT failed. */
  async #runBounded<T>(
    budget: RunBudget<Tx>,
    request: ClaimRequest,
    work: (tx: Tx) => T | Promise<T>,
    again = false,
  ): Promise<LedgerRun<T>> {
    const claimed = await this.#open(budget.client, request);
    if (!('session' in claimed)) return claimed;
    const { session, bounded } = claimed;

    const running = Promise.resolve(session.tx).then(work);
    const settled = await budget.race(settledOf(running));
    if (settled === undefined) {
      const message = await budget.giveUp(
        bounded,
        running.then(
          () => undefined,
          (error: unknown) => error,
        ),
      );
      // Given up already: this only stops the work's tx being known to stage a payout.
      session.abandon(Promise.resolve());
      return message === undefined ? { outcome: 'timed_out' } : { outcome: 'timed_out', message };
    }
    if (!settled.ok) {
      await session.rollback(settled.error);
      return isConflict(settled.error) ? { outcome: 'in_flight' } : { outcome: 'failed', error: settled.error };
    }

    const { claim } = request;
    const held = { text: this.#sql.done.text, params: this.#sql.done.params(claim) };
    try {
      const found = this.#client.commitChecked ? undefined : await session.query(held.text, held.params);
      if (found && found.rows.length !== 1) {
        // The work ended the transaction itself (or the database did, and the work caught it).
        await session.rollback();
        return {
          outcome: 'failed',
          error: new ConfigurationError(
            "the ledger's transaction was no longer open when the work returned: the work must not COMMIT or ROLLBACK tx, nor swallow a failed statement",
            'tx',
          ),
        };
      }
    } catch (error) {
      await session.rollback(error);
      return aborted(error) ? { outcome: 'failed', error } : inFlightOrUnavailable(error, this.table);
    }
    try {
      await session.commit(held);
    } catch (error) {
      // SQLite: the COMMIT this run shared with others failed, perhaps for another's fault, and
      // nothing of it committed: it runs once more at once (as the gateway's retry would), and
      // runs commit alone for a while, so a failure then is its own.
      if (!again && sharedCommitLost(error)) return this.#runBounded(budget, request, work, true);
      // A deferred constraint the work broke fails COMMIT itself: known, rolled back, the work's.
      return aborted(error) || constraintBroken(error)
        ? { outcome: 'failed', error }
        : inFlightOrUnavailable(error, this.table);
    }
    return { outcome: 'processed', value: settled.value };
  }

  /**
   * Opens the run's transaction and claims the key in it: the session, or the outcome when the
   * claim was refused (rolled back). `beside`: the `rows-beside` path may try its one-statement
   * claim first; when that cannot say whose the key's row is, the claim starts again in a new
   * transaction without it.
   */
  async #open(
    client: SqlClient<Tx>,
    request: ClaimRequest,
  ): Promise<{ readonly session: SqlSession<Tx>; readonly bounded: SqlSession<Tx> } | LedgerRun<never>> {
    let session: SqlSession<Tx>;
    let bounded: SqlSession<Tx>;
    try {
      // The run's (bounded by its time) session, known by its tx while open, so the work may stage
      // a payout in it (SqlPayouts.stage); giving up on a timed-out run takes the bounded one.
      // A ledger run: its time is bounded (on SQLite it may share a COMMIT with the runs beside
      // it), and its claim comes before anything else (node-postgres sends BEGIN with it).
      bounded = await client.begin(this.#lockTimeoutMs, true);
      session = tracked(bounded);
    } catch (error) {
      return inFlightOrUnavailable(error, this.table);
    }
    try {
      const refused = await claimKey(session, this.#sql, request);
      if (refused === undefined) return { session, bounded };
      await session.rollback();
      if (refused === UNCLEAR) return this.#open(client, { ...request, beside: false });
      // SQLite: the refusal may rest on a run beside it that waits for a COMMIT they share.
      await session.landed?.();
      return { outcome: refused };
    } catch (error) {
      await session.rollback(error);
      return inFlightOrUnavailable(error, this.table);
    }
  }

  /**
   * Creates the table and its index if they do not exist, then checks the table is the one the
   * ledger needs (every column, of a type that holds what it writes; the key the whole primary
   * key, long enough for every key the ledger writes and compared byte for byte). A table that is missing or differs is a ConfigurationError naming what differs and
   * the statement that fixes it. Idempotent, and safe when several processes run it at once
   * (Postgres takes an advisory lock on the table's name). Where your migration tool owns the
   * table (the ledger's table in your Drizzle or Prisma schema, or {@link SqlLedger.schemaSql} in
   * a migration), call it with `{ create: false }` at start-up: it only checks, so a table that
   * tool dropped stops the server instead of starting an empty ledger.
   *
   * @example
   * ```ts
   * await ledger.ensureSchema(); // creates it if absent, then checks it
   * await ledger.ensureSchema({ create: false }); // checks the table your migrations made
   * ```
   */
  async ensureSchema(options: EnsureSchemaOptions = {}): Promise<void> {
    const { schema, columns, describe, fixColumn } = this.#sql;
    const tables = [{ name: this.table, columns, describe, fixColumn }];
    await ensureSchema(this.#client, { owner: 'the ledger', schema, tables }, options);
  }

  /**
   * The DDL of the ledger's table for a migration tool, in `dialect` (default: this client's).
   *
   * @example
   * ```ts
   * writeFileSync('migrations/001_myr_ledger.sql', ledger.schemaSql('postgres'));
   * ```
   */
  schemaSql(dialect: SqlDialect = this.#client.dialect): string {
    if (dialect !== 'postgres' && dialect !== 'mysql' && dialect !== 'sqlite') {
      throw new ConfigurationError(
        `schemaSql takes 'postgres', 'mysql' or 'sqlite' (got ${String(dialect)})`,
        'dialect',
      );
    }
    return ledgerStatementsOf(dialect, this.#name)
      .schema.map((statement) => `${statement};\n`)
      .join('');
  }

  /**
   * Deletes the records that may go, `batchSize` rows per transaction, and answers how many it
   * deleted: each callback's own record (a payment outcome keeps none through node-postgres and
   * postgres.js) and each `runOnce` key, once expired (`completedTtlMs`, plus `olderThanMs`). It
   * never deletes what makes a payment's resent callback a duplicate or superseded: the payment's
   * row (its mark and the statuses handled), one row of about 100 bytes per payment, which is kept
   * for good; only deleting that row by hand forgets a payment. Run it from a daily job; pruning
   * only saves space.
   *
   * @example
   * ```ts
   * const deleted = await ledger.prune({ olderThanMs: 86_400_000 });
   * ```
   */
  prune(options: PruneOptions = {}): Promise<number> {
    return pruneExpired(this.#client, this.#sql.prune, this.#lockTimeoutMs, options);
  }
}
