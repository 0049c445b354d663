/**
 * The one contract every adapter (`fromPg`, `fromMysql2`, `fromSqlite`, …) fulfils for the
 * ledger: open a transaction on one connection, send parameterised statements through it, and
 * end it by COMMIT, ROLLBACK, or by abandoning it (the work outlived its time: the transaction
 * must never commit). Which database errors mean "somebody else holds the key", which "the
 * connection is gone", and which "the work's writes were refused" (an aborted transaction, a
 * deferred constraint broken at COMMIT), is decided here.
 *
 * @module
 */
import { ConfigurationError } from '../core/errors/base.js';

/** The three SQL dialects the ledger writes. */
export type SqlDialect = 'postgres' | 'mysql' | 'sqlite';

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
   * The work outlived its time and still holds `tx`: make sure this transaction never commits
   * (destroy the connection now, or roll back once `settled` resolves, with what the work threw
   * or undefined). Never rejects.
   */
  abandon(settled: Promise<unknown>): void;
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
  /** @internal Opens a transaction whose lock waits give up after `lockTimeoutMs`. */
  begin(lockTimeoutMs: number): Promise<SqlSession<Tx>>;
  /**
   * @internal Whether `commit(held)` rejects (code `25P02`) when the transaction is no longer the
   * ledger's (Postgres: COMMIT of an aborted transaction answers ROLLBACK, and a SET LOCAL mark is
   * gone when the work ended the transaction; MySQL: `held` finds no row), in COMMIT's own round
   * trip: then the ledger sends no statement of its own to check its claim before COMMIT.
   */
  readonly commitChecked?: boolean | undefined;
  /**
   * @internal Whether the claim may leave before BEGIN's answer (postgres.js pipelines them): the
   * ledger then sends its guarded form, which fails outside the ledger's transaction.
   */
  readonly claimBeforeBegun?: boolean | undefined;
}

// Postgres: serialization_failure, deadlock_detected, lock_not_available (lock_timeout).
// MySQL/MariaDB: ER_LOCK_DEADLOCK (1213), ER_LOCK_WAIT_TIMEOUT (1205). SQLite: BUSY (5), LOCKED (6).
const CONFLICT_CODES = new Set<unknown>(['40001', '40P01', '55P03', 'ER_LOCK_DEADLOCK', 'ER_LOCK_WAIT_TIMEOUT', 'SQLITE_BUSY', 'SQLITE_LOCKED']);
const CONFLICT_ERRNOS = new Set<unknown>([1213, 1205]);
const SQLITE_CONFLICTS = new Set<unknown>([5, 6]);

// Prisma: P2034 (an interactive transaction's write conflict or deadlock); a raw statement's
// failure (P2010) carries the driver's code as `originalCode`, under `meta.driverAdapterError.cause`.
const PRISMA_CONFLICT_CODES = new Set<unknown>(['P2034', '40001', '40P01', '55P03', '1213', '1205']);

function field(error: object, name: string): unknown {
  return name in error ? (error as Record<string, unknown>)[name] : undefined;
}

/** The error this one wraps: its `cause`, or Prisma's driver adapter error. */
function wrapped(error: object): unknown {
  const cause = field(error, 'cause');
  if (cause !== undefined) return cause;
  const meta = field(error, 'meta');
  return typeof meta === 'object' && meta !== null ? field(meta, 'driverAdapterError') : undefined;
}

/** `error` and the errors it wraps, outermost first (at most 5). */
function causes(error: unknown): object[] {
  const found: object[] = [];
  for (let depth = 0; depth < 5 && typeof error === 'object' && error !== null; depth++) {
    found.push(error);
    error = wrapped(error);
  }
  return found;
}

/**
 * Whether `error` (or one of its causes: ORMs wrap the driver's error, Prisma under `meta`) is a lock wait that
 * timed out, a deadlock or a serialization failure: the transaction was rolled back because
 * another one holds the same rows, so the answer is "in flight, try later", never "failed".
 *
 * @example
 * ```ts
 * isConflict({ code: '40P01' }); // true
 * ```
 */
export function isConflict(error: unknown): boolean {
  return causes(error).some((cause) => {
    if (CONFLICT_CODES.has(field(cause, 'code')) || CONFLICT_ERRNOS.has(field(cause, 'errno'))) return true;
    if (PRISMA_CONFLICT_CODES.has(field(cause, 'code')) || PRISMA_CONFLICT_CODES.has(field(cause, 'originalCode')) || field(cause, 'kind') === 'TransactionWriteConflict') return true;
    const sqliteCode = field(cause, 'errcode');
    return typeof sqliteCode === 'number' && SQLITE_CONFLICTS.has(sqliteCode & 0xff);
  });
}

// postgres.js's own codes for a connection it closed (node-postgres and mysql2 destroy theirs).
const LOST_CONNECTION = new Set<unknown>(['CONNECTION_CLOSED', 'CONNECTION_DESTROYED', 'CONNECTION_ENDED', 'CONNECT_TIMEOUT']);

/**
 * Whether `error` says the connection is gone, so nothing more can be sent on it: the driver
 * closed it, its socket failed (a system error has a `syscall`), or the server ended the session
 * (a FATAL or PANIC, such as 57P01 when an admin or a failover terminates it).
 *
 * @example
 * ```ts
 * connectionLost({ code: 'ECONNRESET', syscall: 'read' }); // true
 * ```
 */
export function connectionLost(error: unknown): boolean {
  if (typeof error !== 'object' || error === null) return false;
  const syscall = field(error, 'syscall');
  const severity = field(error, 'severity');
  return LOST_CONNECTION.has(field(error, 'code')) || typeof syscall === 'string' || severity === 'FATAL' || severity === 'PANIC';
}

/** The SQLSTATEs `error` and its causes carry (`code`; Prisma's driver adapter error: `originalCode`). */
const sqlStates = (error: unknown): unknown[] => causes(error).flatMap((cause) => [field(cause, 'code'), field(cause, 'originalCode')]);

/**
 * Whether `error` (or one of its causes) is Postgres's in_failed_sql_transaction (25P02): a
 * statement of the work failed and the work caught it.
 *
 * @example
 * ```ts
 * aborted({ code: '25P02' }); // true
 * ```
 */
export const aborted = (error: unknown): boolean => sqlStates(error).includes('25P02');

// Postgres: undefined_column (42703); MySQL/MariaDB: ER_BAD_FIELD_ERROR (1054), Prisma's
// `originalCode` as text; SQLite says it only in its message ("no such column" in a read,
// "table … has no column named …" in an INSERT's column list).
const NO_SUCH_COLUMN = new Set<unknown>(['42703', 'ER_BAD_FIELD_ERROR', '1054', 1054]);

/**
 * Whether `error` (or one of its causes) says a statement named a column its table does not have.
 *
 * @example
 * ```ts
 * columnMissing({ code: '42703' }); // true
 * ```
 */
export function columnMissing(error: unknown): boolean {
  return causes(error).some((cause) => {
    if ([field(cause, 'code'), field(cause, 'originalCode'), field(cause, 'errno')].some((code) => NO_SUCH_COLUMN.has(code))) return true;
    const message = field(cause, 'message');
    return typeof message === 'string' && (message.startsWith('no such column') || / has no column named /.test(message));
  });
}

// SQLite's SQLITE_CONSTRAINT (19): node:sqlite's `errcode` is the extended code, whose low byte
// it is (787, a foreign key); better-sqlite3 names it in `code` (SQLITE_CONSTRAINT_FOREIGNKEY).
const SQLITE_CONSTRAINT = 19;

/**
 * Whether `error` (or one of its causes: ORMs wrap the driver's error) is an integrity constraint
 * violation: Postgres's class 23, SQLite's SQLITE_CONSTRAINT. At COMMIT, a deferred constraint the
 * work's writes broke (a deferred foreign key on SQLite). The server answered, and rolled
 * everything back (SQLite: the ledger does): the outcome is known, and it is the work's.
 *
 * @example
 * ```ts
 * constraintBroken({ code: '23503' }); // true: foreign_key_violation
 * constraintBroken({ code: 'ERR_SQLITE_ERROR', errcode: 787 }); // true: SQLITE_CONSTRAINT_FOREIGNKEY
 * ```
 */
export function constraintBroken(error: unknown): boolean {
  return causes(error).some((cause) => {
    const code = field(cause, 'code');
    const sqlite = field(cause, 'errcode');
    return (
      [code, field(cause, 'originalCode')].some((state) => typeof state === 'string' && /^23[0-9A-Z]{3}$/.test(state)) ||
      (typeof sqlite === 'number' && (sqlite & 0xff) === SQLITE_CONSTRAINT) ||
      (typeof code === 'string' && code.startsWith('SQLITE_CONSTRAINT'))
    );
  });
}

/** The error of a COMMIT the database turned into a ROLLBACK (a statement of the work had failed). */
export function rolledBack(answer: string): Error {
  return Object.assign(new Error(`COMMIT answered ${answer}: the transaction was rolled back (a statement of the work failed)`), { code: '25P02' });
}

/** What a statement sent through the work's `tx` after its run had ended is refused with (nothing is sent). */
export function usedAfterRun(): ConfigurationError {
  return new ConfigurationError("a query was sent through the ledger's tx after its run had ended (nothing was sent: the connection is no longer the run's); use tx only inside the handler", 'tx');
}

/** Waits for `promise` and drops its outcome: for clean-up whose failure changes nothing. */
export function settle(promise: Promise<unknown>): Promise<void> {
  return promise.then(
    () => undefined,
    () => undefined,
  );
}
