/**
 * How a Postgres run's transaction opens, bounds its lock waits, proves it is still the ledger's
 * and commits; and Postgres's error codes the ledger reads. postgres.js sends {@link beginRun},
 * and node-postgres too outside a ledger run; a node-postgres ledger run sends BEGIN and
 * {@link BOUND_AND_MARKED} with its claim; an ORM, whose transaction is open already,
 * {@link boundLockWaits}.
 *
 * @module
 */
import type { DialectErrors } from '../dialect.js';

/**
 * A setting only the ledger's own Postgres transactions hold (SET LOCAL, with BEGIN): gone once
 * the transaction ended, so a statement can tell it runs inside one.
 */
export const LEDGER_TX = 'myr_gateway.ledger_tx';

/** Lock waits are bounded in ms (`lock_timeout`), an integer the ledger checked. */
const lockTimeout = (lockTimeoutMs: number) => `SET LOCAL lock_timeout = ${lockTimeoutMs}`;

/**
 * BEGIN, the run's lock bound and the mark of the ledger's transaction, in one simple query (one
 * round trip): COMMIT's check ({@link CHECK_THEN_COMMIT}) reads the mark.
 */
export const beginRun = (lockTimeoutMs: number): string =>
  `BEGIN; ${lockTimeout(lockTimeoutMs)}; SET LOCAL ${LEDGER_TX} = 'on'`;

/**
 * The run's lock bound (`$1`, ms) and the mark of the ledger's transaction, as one statement with
 * a parameter: what {@link beginRun}'s SET LOCALs set (`set_config(…, true)` lasts until the
 * transaction ends), in a form prepared once per connection, which node-postgres sends behind
 * BEGIN and before the claim in one round trip.
 */
export const BOUND_AND_MARKED = `SELECT set_config('lock_timeout', $1, true) AS lock_timeout, set_config('${LEDGER_TX}', 'on', true) AS ledger_tx`;

/** The lock bound inside a transaction an ORM opened (ends with the transaction). */
export const boundLockWaits = (lockTimeoutMs: number): string => lockTimeout(lockTimeoutMs);

/**
 * The check and COMMIT of a Postgres run, in one simple query: COMMIT only while the ledger's
 * transaction is still the one open. Work that ended it on tx took the claim along, and work that
 * then began again left a transaction of its own open: COMMIT would commit its writes without the
 * claim (the redelivery, finding the key free, writes them again). Outside the ledger's
 * transaction the check fails (22P02: its text is no boolean), and Postgres skips the rest of a
 * simple query after an error, so that COMMIT is never sent; in a transaction a failed statement
 * aborted, it fails with 25P02 alike. Either leaves at most a transaction to roll back.
 */
export const CHECK_THEN_COMMIT = `SELECT CASE WHEN current_setting('${LEDGER_TX}', true) = 'on' THEN true ELSE ('myr-gateway: the ledger''s transaction is no longer open' || coalesce(current_setting('${LEDGER_TX}', true), ''))::boolean END AS held; COMMIT`;

/** Whether {@link CHECK_THEN_COMMIT} failed because the ledger's transaction was no longer the one open (22P02). */
export const transactionNotOpen = (error: unknown): boolean =>
  typeof error === 'object' && error !== null && 'code' in error && error.code === '22P02';

/**
 * Whether `error` is Postgres's for a prepared statement the connection no longer has (26000:
 * DEALLOCATE ALL ran on it since node-postgres prepared it).
 */
export const preparedStatementGone = (error: unknown): boolean =>
  typeof error === 'object' && error !== null && 'code' in error && error.code === '26000';

/** Schema changes of several processes at once take turns on an advisory lock on the table's name. */
export const SCHEMA_LOCK = 'SELECT 1 AS locked FROM pg_advisory_xact_lock(hashtext($1))';

/**
 * The sessions waiting on a lock this session's transaction holds: read on a run that timed out,
 * where a handler that wrote through another connection instead of tx waits on its own run.
 */
export const WAITING_ON_THIS_SESSION =
  'SELECT pid FROM pg_stat_activity WHERE pg_backend_pid() = ANY (pg_blocking_pids(pid))';

/** Postgres's SQLSTATEs the ledger reads. */
export const errors: DialectErrors = {
  // serialization_failure, deadlock_detected, lock_not_available (lock_timeout).
  conflictCodes: ['40001', '40P01', '55P03'],
};
