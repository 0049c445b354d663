/**
 * How a SQLite run's transaction opens and ends, how a file the ledger opens is set up, and
 * SQLite's result codes the ledger reads. SQLite has one writer at a time: a run begins
 * IMMEDIATE (it takes the write lock at BEGIN, never half-way through), and the adapter waits for
 * it in JavaScript, without blocking the event loop.
 *
 * @module
 */
import type { DialectErrors } from '../dialect.js';

/** Takes the write lock at BEGIN: a run never fails half-way on a lock another writer holds. */
export const BEGIN = 'BEGIN IMMEDIATE';
export const COMMIT = 'COMMIT';
export const ROLLBACK = 'ROLLBACK';
/** A run that joins a transaction another run began (a COMMIT they share) keeps its part apart. */
export const SAVEPOINT = 'SAVEPOINT myr_ledger_run';
export const RELEASE = 'RELEASE myr_ledger_run';
export const ROLLBACK_TO = 'ROLLBACK TO myr_ledger_run';
/**
 * The code of what a run is told when the COMMIT it shared with other runs failed: nothing of it
 * committed, and the failure may be another run's (the ledger runs it once more, alone).
 */
export const SHARED_COMMIT_FAILED = 'MYR_SQLITE_SHARED_COMMIT_FAILED';

/**
 * A file the ledger opens itself: WAL (readers never wait for the writer), `synchronous=NORMAL`
 * (durable at each checkpoint, the usual pairing with WAL), and a short busy wait (the adapter
 * waits longer itself, without blocking).
 */
export const OPEN_FILE = 'PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL; PRAGMA busy_timeout = 10';

/**
 * The most one run may take on SQLite by default, in ms (`fromSqlite`'s `maxRunMs`). One writer:
 * a run holds the write lock for its handler's whole time, and another payment's delivery waits
 * `lockTimeoutMs` (1 s) for it, then is answered 409 and retried by the gateway about 1 s later,
 * then 5 s later. A run that lets go by 2 s leaves that second delivery the lock, and the third a
 * spare.
 */
export const MAX_RUN_MS = 2000;

/** SQLITE_BUSY (5) and SQLITE_LOCKED (6): another connection holds the lock. */
const BUSY_CODES = [5, 6];
/** SQLITE_CONSTRAINT (19): node:sqlite's `errcode` is the extended code, whose low byte it is. */
export const CONSTRAINT = 19;

/** Whether a result code (node:sqlite's extended `errcode`) says another connection holds the lock. */
export const isBusyCode = (errcode: number): boolean => BUSY_CODES.includes(errcode & 0xff);

/** SQLite's codes the ledger reads (numeric result codes are read by {@link isBusyCode}). */
export const errors: DialectErrors = {
  conflictCodes: ['SQLITE_BUSY', 'SQLITE_LOCKED', SHARED_COMMIT_FAILED],
};
