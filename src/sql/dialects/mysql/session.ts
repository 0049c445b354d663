/**
 * How a MySQL 8 / MariaDB 10.11 run's transaction opens, bounds its lock waits, proves it is still
 * the ledger's and ends, with the connection's own settings put back; the isolation level the
 * ledger's claims need; and MySQL's error codes the ledger reads.
 *
 * A run saves the session's `innodb_lock_wait_timeout` and `autocommit` (and, on mysql2, its
 * isolation level) in user variables, sets its own, and restores them before the connection goes
 * back to its pool. Autocommit is off for the run: InnoDB rolls the whole transaction back on a
 * deadlock, and in autocommit a statement the work sent after it (having caught the error) would
 * commit on its own, outside the ledger.
 *
 * @module
 */
import type { DialectErrors } from '../dialect.js';

/**
 * The isolation level every MySQL run needs: the claim reads the payment's mark without a lock
 * (`INSERT … SELECT` reads its source as a snapshot that has the transaction's own write). Under
 * REPEATABLE READ it would take a gap lock on the missing mark of most payments, and concurrent
 * claims of other keys deadlock. Every MySQL adapter asks for it, each in its client's words
 * (`adapters/orm-transaction.ts` for the ORMs; mysql2 sets the session's variable below).
 */
export const ISOLATION = 'read committed';

/** The session's isolation variable: MySQL 8 (and MariaDB 11.1+) name it `transaction_isolation`; MariaDB 10 only `tx_isolation`. */
export type IsolationVariable = 'transaction_isolation' | 'tx_isolation';

/** ER_UNKNOWN_SYSTEM_VARIABLE: the server does not know this isolation variable's name (a SET naming it changes nothing). */
export const unknownVariable = (error: unknown): boolean => errnoOf(error) === 1193;

/** ER_BINLOG_STMT_MODE_AND_ROW_ENGINE: a server logging statements refuses READ COMMITTED writes. */
export const refusedByStatementBinlog = (error: unknown): boolean => errnoOf(error) === 1665;

// What COMMIT's check sets autocommit to when the claim is gone: refused (ER_WRONG_VALUE_FOR_VAR),
// so the whole SET fails and nothing commits.
const CLAIM_GONE = 'myr_gateway_claim_gone';

/** Whether {@link commitAndRestore}'s check refused the COMMIT because the claim's row was gone. */
export const claimGone = (error: unknown): boolean =>
  errnoOf(error) === 1231 &&
  typeof error === 'object' &&
  error !== null &&
  'message' in error &&
  String(error.message).includes(CLAIM_GONE);

function errnoOf(error: unknown): unknown {
  return typeof error === 'object' && error !== null && 'errno' in error ? error.errno : undefined;
}

/** Lock waits are bounded in whole seconds (`innodb_lock_wait_timeout`), rounded up. */
const lockWaitSeconds = (lockTimeoutMs: number) => Math.ceil(lockTimeoutMs / 1000);

/**
 * Saves the session's settings and sets the run's, in one statement: the lock bound, autocommit
 * off (the transaction opens at the next statement: START TRANSACTION would be a second round
 * trip) and, given its variable's name, READ COMMITTED (an ORM asks for it through its own API).
 */
export function saveAndBound(lockTimeoutMs: number, isolation?: IsolationVariable): string {
  const saveIsolation = isolation ? `, @myr_gateway_iso = @@SESSION.${isolation}` : '';
  // The session variable's spelling of ISOLATION: mysql2 opens no transaction of its own to ask with.
  const setIsolation = isolation ? `, SESSION ${isolation} = '${ISOLATION.toUpperCase().replace(' ', '-')}'` : '';
  return (
    `SET @myr_gateway_lwt = @@SESSION.innodb_lock_wait_timeout, @myr_gateway_ac = @@SESSION.autocommit${saveIsolation}, ` +
    `SESSION innodb_lock_wait_timeout = ${lockWaitSeconds(lockTimeoutMs)}${setIsolation}, SESSION autocommit = 0`
  );
}

const restored = (isolation?: IsolationVariable) =>
  `SESSION innodb_lock_wait_timeout = @myr_gateway_lwt${isolation ? `, SESSION ${isolation} = @myr_gateway_iso` : ''}, SESSION autocommit = @myr_gateway_ac`;

/** Puts the settings {@link saveAndBound} saved back (after a ROLLBACK; turning autocommit on commits an open transaction). */
export const restore = (isolation?: IsolationVariable): string => `SET ${restored(isolation)}`;

/**
 * COMMIT, its check and the restore in one round trip: turning autocommit on commits the open
 * transaction (and answers an error when that commit fails) before the connection's own settings
 * are put back. With `held` (the text of a statement that finds the claim's row), the whole SET is
 * refused when the row is gone ({@link claimGone}): nothing of it commits. `rollbackOnTimeoutOff`:
 * also refused on a server that rolls a transaction back on a lock wait timeout.
 */
export function commitAndRestore(
  isolation: IsolationVariable | undefined,
  held?: { readonly text: string; readonly rollbackOnTimeoutOff: boolean },
): string {
  const kept = held?.rollbackOnTimeoutOff ? ' AND @@GLOBAL.innodb_rollback_on_timeout = 0' : '';
  const commit = held ? `IF(EXISTS(${held.text})${kept}, 'ON', '${CLAIM_GONE}')` : "'ON'";
  return `SET SESSION autocommit = ${commit}, ${restored(isolation)}`;
}

/** MySQL's error codes the ledger reads. */
export const errors: DialectErrors = {
  // ER_LOCK_DEADLOCK (1213), ER_LOCK_WAIT_TIMEOUT (1205).
  conflictCodes: ['ER_LOCK_DEADLOCK', 'ER_LOCK_WAIT_TIMEOUT'],
  conflictErrnos: [1213, 1205],
};
