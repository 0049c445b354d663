/**
 * The one contract every adapter (`fromPg`, `fromMysql2`, `fromSqlite`, …) fulfils for the
 * ledger: open a transaction on one connection, send parameterised statements through it, and
 * end it by COMMIT, ROLLBACK, or by abandoning it (the work outlived its time: the transaction
 * must never commit). What a database error means to the ledger is `database-errors.ts`.
 *
 * @module
 */
import { ConfigurationError } from '../core/errors/base.js';

import type { SqlDialect } from './dialects/dialect.js';

export type { SqlDialect } from './dialects/dialect.js';

/** One statement's answer, reduced to what the ledger reads. */
export interface SqlResult {
  /** Rows of a SELECT (or RETURNING), column names as written in the statement. */
  readonly rows: readonly Record<string, unknown>[];
  /** Rows inserted, updated or deleted. */
  readonly affected: number;
}

/** One parameterised statement. */
export interface SqlStatement {
  /** The SQL, with the dialect's placeholders. */
  readonly text: string;
  /** Its parameters, in placeholder order. */
  readonly params: readonly unknown[];
}

/** One open transaction on one connection. */
export interface SqlSession<Tx> {
  /** The merchant's own handle on this transaction, given to the work. */
  readonly tx: Tx;
  /** Sends one parameterised statement inside the transaction. */
  query(text: string, params: readonly unknown[]): Promise<SqlResult>;
  /**
   * COMMIT; rejects when the database did not confirm it (outcome unknown, or rolled back).
   * `held` is the statement whose one row shows the ledger's claim is still this transaction's:
   * a client with `commitChecked` that has no mark of its own (MySQL) checks it within COMMIT's
   * round trip and rejects with code `25P02` when it finds no row (nothing committed).
   */
  commit(held: SqlStatement | undefined): Promise<void>;
  /**
   * ROLLBACK, then gives the connection back. Never rejects: a failed rollback destroys the
   * connection. `cause`, what made the run roll back: when it says the connection is gone, an
   * adapter sends nothing more on it (the server rolled back already).
   */
  rollback(cause?: unknown): Promise<void>;
  /**
   * The work outlived its time and still holds `tx`: end this transaction now, so that it never
   * commits and the locks it holds go at once (a handler stuck on one of them through another
   * connection would otherwise hold both connections for ever): destroy the connection, or roll
   * back at once, and refuse what the work sends through `tx` from then on. `settled` resolves
   * with what the work threw (or undefined) once it settles. Never rejects.
   */
  abandon(settled: Promise<unknown>): void;
  /**
   * Resolves once everything the session read is committed; rejects (code
   * `MYR_SQLITE_SHARED_COMMIT_FAILED`) when that COMMIT failed. Only SQLite has it: a run there
   * may read the part of a run beside it that waits for the COMMIT they share, so a refusal read
   * off it (duplicate, superseded) is answered only once that lands.
   */
  landed?(): Promise<void>;
}

/**
 * What an adapter gives {@link SqlLedger}: a merchant's database client, wrapped. Built by
 * `fromPg`, `fromPostgresJs`, `fromMysql2`, `fromKysely`, `fromDrizzle`, `fromPrisma` or `fromSqlite`;
 * `Tx` is the type the handler receives as `tx`.
 *
 * @example
 * ```ts
 * const client: SqlClient<pg.PoolClient> = fromPg(pool);
 * ```
 */
export interface SqlClient<Tx> {
  /** The dialect the ledger writes for this client. */
  readonly dialect: SqlDialect;
  /**
   * @internal Opens a transaction whose lock waits give up after `lockTimeoutMs`. `ledgerRun`:
   * the session is a ledger run, whose time is bounded and whose first act is a statement of its
   * own (its claim), sent before its `tx` is handed out. A client with one writer (SQLite) may
   * then let it share one COMMIT with the runs beside it, and node-postgres sends BEGIN with that
   * statement, in its round trip; any other session commits alone and is open once this resolves.
   */
  begin(lockTimeoutMs: number, ledgerRun?: boolean): Promise<SqlSession<Tx>>;
  /**
   * @internal Whether `commit(held)` rejects (code `25P02`) when the transaction is no longer the
   * ledger's (Postgres: COMMIT of an aborted transaction answers ROLLBACK, and a SET LOCAL mark is
   * gone when the work ended the transaction; MySQL: `held` finds no row), in COMMIT's own round
   * trip: then the ledger sends no statement of its own to check its claim before COMMIT.
   */
  readonly commitChecked?: boolean | undefined;
  /**
   * @internal The most one run may take on this client, in ms, whatever the run asks (the shorter
   * wins): SQLite's single writer makes every other callback wait for a run's whole time.
   */
  readonly maxRunMs?: number | undefined;
  /**
   * @internal Its runs may share one COMMIT (SQLite): a run's COMMIT then waits for the runs let
   * in after it, each bounded by `maxRunMs`, so a run's own time does not cut that wait (its part
   * is in, and is answered with the COMMIT, never 503 for a run that committed).
   */
  readonly sharesCommit?: boolean | undefined;
  /**
   * @internal Whether the claim may leave before BEGIN's answer (postgres.js pipelines them): the
   * ledger then sends its guarded form, which fails outside the ledger's transaction.
   */
  readonly claimBeforeBegun?: boolean | undefined;
}

/** The error of a COMMIT the database turned into a ROLLBACK (a statement of the work had failed). */
export function rolledBack(answer: string): Error {
  return Object.assign(
    new Error(`COMMIT answered ${answer}: the transaction was rolled back (a statement of the work failed)`),
    { code: '25P02' },
  );
}

/** What a statement sent through the work's `tx` after its run had ended is refused with (nothing is sent). */
export function usedAfterRun(): ConfigurationError {
  return new ConfigurationError(
    "a query was sent through the ledger's tx after its run had ended (nothing was sent: the connection is no longer the run's); use tx only inside the handler",
    'tx',
  );
}

/** Runs `body` in one transaction of its own: committed when it returns, rolled back when it throws. */
export async function transaction<Tx, R>(
  client: SqlClient<Tx>,
  lockTimeoutMs: number,
  body: (session: SqlSession<Tx>) => Promise<R>,
): Promise<R> {
  const session = await client.begin(lockTimeoutMs);
  let result: R;
  try {
    result = await body(session);
  } catch (error) {
    await session.rollback();
    throw error;
  }
  await session.commit(undefined);
  return result;
}

/** Waits for `promise` and drops its outcome: for clean-up whose failure changes nothing. */
export function settle(promise: Promise<unknown>): Promise<void> {
  return promise.then(
    () => undefined,
    () => undefined,
  );
}
