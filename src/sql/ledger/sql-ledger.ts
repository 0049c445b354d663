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
import { within } from '../../core/wait.js';
import type { LedgerRun, PaymentOrder, TransactionalWebhookStore } from '../../webhooks/stores/types.js';
import { supersedesNothing } from '../../webhooks/lifecycle.js';
import { runBudget } from './run-budget.js';
import { aborted, constraintBroken, isConflict, storeFailure } from '../database-errors.js';
import type { LedgerStatements, SqlDialect, Statement } from '../dialects/dialect.js';
import { ledgerStatementsOf } from '../dialects/ledger-statements-of.js';
import { checkTableName, type TableName } from '../dialects/table-name.js';
import type { SqlClient, SqlSession } from '../sql-client.js';
import { claimOf, markRow, type Claim } from './claims.js';
import { handledBit, KEPT_FOR_GOOD } from './handled-statuses.js';
import { ensureSchema, type EnsureSchemaOptions } from './ensure-schema.js';
import { pruneExpired, type PruneOptions } from './prune.js';

/** Options of {@link SqlLedger}. */
export interface SqlLedgerOptions {
  /**
   * The ledger's table: an identifier, or `schema.table`, each `[A-Za-z_][A-Za-z0-9_]{0,62}`
   * (anything else is a ConfigurationError). It holds the handled keys and the payments' marks.
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
  /** The payment's place in its life: the run is `superseded` when a later status was handled. */
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
/** The mark a status that does not raise it writes: the payment's row, for its lock, superseding nothing. */
const LOCK_ONLY_RANK = supersedesNothing();

export type { EnsureSchemaOptions } from './ensure-schema.js';
export type { PruneOptions } from './prune.js';

/** Sends one of the dialect's statements with its parameters. */
const send = <A>(session: SqlSession<unknown>, statement: Statement<A>, args: A) => session.query(statement.text, statement.params(args));

/** A claim that could not tell whether the key's row is its own: claimed again, in two statements. */
const UNCLEAR = Symbol('unclear');

/** What became of the work: its value, what it threw, or nothing yet when its time ran out. */
type Settled<T> = { readonly ok: true; readonly value: T } | { readonly ok: false; readonly error: unknown } | undefined;

function settledWithin<T>(running: Promise<T>, timeoutMs: number | undefined): Promise<Settled<T>> {
  const settled = running.then(
    (value) => ({ ok: true as const, value }),
    (error: unknown) => ({ ok: false as const, error }),
  );
  return timeoutMs === undefined ? settled : within(settled, { ms: timeoutMs, onTimeout: () => undefined });
}

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
      throw new ConfigurationError('SqlLedger takes a client built by fromPg, fromPostgresJs, fromMysql2, fromKysely, fromDrizzle, fromPrisma or fromSqlite', 'client');
    }
    this.#name = checkTableName(options.table ?? 'myr_webhook_ledger');
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
    const timeoutMs = options.timeoutMs === undefined ? undefined : milliseconds(options.timeoutMs, 'timeoutMs');
    const { order } = options;
    const now = Date.now();
    const claim = claimOf(key, now, completedTtlMs);
    const budget = runBudget(this.#client, timeoutMs);
    const claimed = await this.#open(budget.client, claim, now, order, options.raiseMark, true);
    if (!('session' in claimed)) return claimed;
    const { session } = claimed;

    const running = Promise.resolve(session.tx).then(work);
    const settled = await settledWithin(running, budget.remainingMs());
    if (settled === undefined) {
      const message = await budget.giveUp(session, running.then(() => undefined, (error: unknown) => error));
      return message === undefined ? { outcome: 'timed_out' } : { outcome: 'timed_out', message };
    }
    if (!settled.ok) {
      await session.rollback(settled.error);
      return isConflict(settled.error) ? { outcome: 'in_flight' } : { outcome: 'failed', error: settled.error };
    }

    const held = { text: this.#sql.done.text, params: this.#sql.done.params(claim) };
    try {
      const found = this.#client.commitChecked ? undefined : await session.query(held.text, held.params);
      if (found && found.rows.length !== 1) {
        // The work ended the transaction itself (or the database did, and the work caught it).
        await session.rollback();
        return { outcome: 'failed', error: new ConfigurationError('the ledger\'s transaction was no longer open when the work returned: the work must not COMMIT or ROLLBACK tx, nor swallow a failed statement', 'tx') };
      }
    } catch (error) {
      await session.rollback(error);
      return aborted(error) ? { outcome: 'failed', error } : inFlightOrUnavailable(error, this.table);
    }
    try {
      await session.commit(held);
    } catch (error) {
      // A deferred constraint the work broke fails COMMIT itself: known, rolled back, the work's.
      return aborted(error) || constraintBroken(error) ? { outcome: 'failed', error } : inFlightOrUnavailable(error, this.table);
    }
    return { outcome: 'processed', value: settled.value };
  }

  /**
   * Opens the run's transaction and claims the key in it: the session, or the outcome when the
   * claim was refused (rolled back). `beside`: the `rows-beside` path may try its one-statement
   * claim first; when that cannot say whose the key's row is, the claim starts again in a new
   * transaction without it.
   */
  async #open(client: SqlClient<Tx>, claim: Claim, now: number, order: PaymentOrder | undefined, raiseMark: boolean, beside: boolean): Promise<{ readonly session: SqlSession<Tx> } | LedgerRun<never>> {
    let session: SqlSession<Tx>;
    try {
      session = await client.begin(this.#lockTimeoutMs);
    } catch (error) {
      return inFlightOrUnavailable(error, this.table);
    }
    try {
      const refused = await this.#claim(session, claim, now, order, raiseMark, beside);
      if (refused === undefined) return { session };
      await session.rollback();
      return refused === UNCLEAR ? this.#open(client, claim, now, order, raiseMark, false) : { outcome: refused };
    } catch (error) {
      await session.rollback(error);
      return inFlightOrUnavailable(error, this.table);
    }
  }

  /**
   * Takes the key in this transaction; answers why not otherwise. A callback with a place in its
   * payment's life writes the payment's row, kept for good: its mark (raised to its rank when
   * `raiseMark`, else written at the rank that supersedes nothing) and the bit of its status,
   * committed with the work. A status whose bit is set is a duplicate at any age, long after its
   * key's own record expired. Writing the row locks it until COMMIT (except on SQLite, one writer
   * at a time): one payment's ordered callbacks run one at a time, and each claim reads what its
   * predecessor committed. The dialect names its path (`ClaimPath` in dialects/dialect.ts): one
   * statement on the common path where it can. The reason for a refusal is read only then.
   */
  async #claim(session: SqlSession<Tx>, claim: Claim, now: number, order: PaymentOrder | undefined, raiseMark: boolean, beside: boolean): Promise<'duplicate' | 'superseded' | typeof UNCLEAR | undefined> {
    const sql = this.#sql;
    if (order === undefined) {
      if ((await send(session, sql.claim, { claim, now })).affected === 1) return undefined;
      return this.#takeOver(session, claim, now);
    }
    const args = { claim, now, mark: markRow(order.paymentId), rank: order.rank, markRank: raiseMark ? order.rank : LOCK_ONLY_RANK, handled: handledBit(order.status), keptUntil: KEPT_FOR_GOOD };
    const path = sql.claimPath;
    switch (path.name) {
      case 'mark-in-claim':
        if ((await send(session, sql.claimOrdered, args)).affected === 1) return undefined;
        return (await this.#refusal(session, args)) ?? 'duplicate';
      case 'claim-then-mark':
        if ((await send(session, sql.claimOrdered, args)).affected !== 1) return (await this.#refusal(session, args)) ?? 'duplicate';
        await send(session, path.markClaimed, args);
        return undefined;
      case 'rows-beside': {
        if (beside && !raiseMark) {
          const inserted = (await send(session, path.claimBeside, args)).affected;
          // Both rows new: nothing marked the payment, so nothing supersedes the callback.
          if (inserted === 2) return undefined;
          const refused = await this.#refusal(session, args);
          if (refused !== undefined) return refused;
          // One: the payment's or the key's. Neither: the key's row was there; a live one is a
          // duplicate. Both go again the two-statement way, which locks the payment's row for
          // writing: an existing one is only share-locked here, which another status of the
          // payment (taking over its own expired record) would share, and run beside this one.
          if (inserted === 0 && (await this.#takeOver(session, claim, now)) === 'duplicate') return 'duplicate';
          return UNCLEAR;
        }
        await send(session, path.lockMark, args);
        if ((await send(session, sql.claimOrdered, args)).affected !== 1) {
          const refused = await this.#refusal(session, args);
          if (refused !== undefined) return refused;
          if ((await this.#takeOver(session, claim, now)) === 'duplicate') return 'duplicate';
        }
        if (args.handled !== 0) await send(session, path.markHandled, args);
        return undefined;
      }
    }
  }

  /**
   * Why the payment's row (as last committed, and locked by the claim) refuses the callback: a
   * later status was handled (`superseded`), or this one was (`duplicate`); undefined when neither.
   */
  async #refusal(session: SqlSession<Tx>, { mark, rank, handled }: { readonly mark: string; readonly rank: number; readonly handled: number }): Promise<'superseded' | 'duplicate' | undefined> {
    const row = (await send(session, this.#sql.readMark, { mark })).rows[0];
    if (row === undefined) return undefined;
    if (row.mark_rank !== null && Number(row.mark_rank) > rank) return 'superseded';
    return (Number(row.handled_statuses) & handled) !== 0 ? 'duplicate' : undefined;
  }

  /** The key's row exists: claimed when it had expired (`rows-beside` takes it over here; the others in the claim), else a duplicate. */
  async #takeOver(session: SqlSession<Tx>, claim: Claim, now: number): Promise<'duplicate' | undefined> {
    const path = this.#sql.claimPath;
    if (path.name === 'rows-beside' && (await send(session, path.takeOver, { claim, now })).affected === 1) return undefined;
    return 'duplicate';
  }

  /**
   * Creates the table and its index if they do not exist, then checks the table is the one the
   * ledger needs (every column, of a type that holds what it writes; on MySQL a key compared byte
   * for byte). A table that is missing or differs is a ConfigurationError naming what differs and
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
    await ensureSchema(this.#client, this.#sql, this.table, options);
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
      throw new ConfigurationError(`schemaSql takes 'postgres', 'mysql' or 'sqlite' (got ${String(dialect)})`, 'dialect');
    }
    return ledgerStatementsOf(dialect, this.#name).schema.map((statement) => `${statement};\n`).join('');
  }

  /**
   * Deletes the records that may go, `batchSize` rows per transaction, and answers how many it
   * deleted: each callback's own record and each `runOnce` key, once expired (`completedTtlMs`,
   * plus `olderThanMs`). It never deletes what makes a payment's resent callback a duplicate or
   * superseded: the payment's row (its mark and the statuses handled), one row of about 100 bytes
   * per payment, which is kept for good; only deleting that row by hand forgets a payment. Run it
   * from a daily job; pruning only saves space.
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
