/**
 * What the work may do with its SQLite `tx`: the ledger's own connection, for the run's time
 * only. Once the run has ended (committed, rolled back, or timed out and rolled back at once), the
 * same connection runs the next run's transaction or statements in autocommit: a statement the
 * work sends after that would join another callback's transaction or commit on its own. So every
 * call of `tx`, and of the statements the work prepared through it, is refused then (a
 * ConfigurationError thrown, nothing sent); `close()` is always refused (the connection is the
 * ledger's). It also tells whether the work may have ended the ledger's transaction: after only
 * plain reads and writes prepared through `tx` (plain-statement.ts) that succeeded, it cannot
 * have, and COMMIT goes without the ledger's check; after anything else (`exec`, a statement that
 * is not plain or that failed, an iterator, any other method) the check goes with COMMIT.
 *
 * @module
 */
import type { DatabaseSync } from 'node:sqlite';
import { ConfigurationError } from '../../../core/errors/base.js';
import { usedAfterRun } from '../../sql-client.js';
import { keepsTransaction } from '../tx/plain-statement.js';
import { secretFree, showsItself } from '../tx/secret-free.js';

/** What `tx` shows of itself in a log: which kind of connection, never more. */
class SqliteTx {
  readonly connection = "the ledger's own SQLite connection";
}

/** What `close()` through `tx` is refused with: the connection outlives the run. */
function closeRefused(): ConfigurationError {
  return new ConfigurationError(
    "tx is the ledger's own SQLite connection, which the ledger keeps open: close your own DatabaseSync, never tx",
    'tx',
  );
}

/** A method of the connection or of a statement, as read off it. */
type Method = (...args: unknown[]) => unknown;

/** A statement's methods that run it and answer at once: anything else it does is noted. */
const RUNS_AT_ONCE = new Set<string | symbol>(['run', 'all', 'get']);
/** Methods that send nothing: the work may use them as it likes. */
const SENDS_NOTHING = new Set<string | symbol>([
  'columns',
  'setReadBigInts',
  'setAllowBareNamedParameters',
  'setAllowUnknownNamedParameters',
  'setReturnArrays',
]);

/**
 * `target`'s methods, each refused once `ended()`, called on `target`; `call` runs one (a plain
 * `Reflect.apply` unless it notes or wraps what it does).
 */
function guarded<T extends object>(
  target: T,
  ended: () => boolean,
  call: (key: string | symbol, method: Method, args: unknown[]) => unknown,
  show: () => object,
): T {
  return secretFree(target, show, {
    get(_, key) {
      if (showsItself(key)) return show;
      const value: unknown = Reflect.get(target, key, target);
      if (typeof value !== 'function') return value;
      return (...args: unknown[]) => {
        if (key === 'close') throw closeRefused();
        if (ended()) throw usedAfterRun();
        return call(key, value as Method, args);
      };
    },
  });
}

/**
 * The work's `tx` over the ledger's connection `db`, usable while `ended()` is false (`prepare`
 * answers a statement guarded the same way), and whether COMMIT must check that the transaction
 * is still the ledger's.
 *
 * @example
 * ```ts
 * let ended = false;
 * const { tx, mayHaveEnded } = sqliteTx(db, () => ended);
 * ```
 */
export function sqliteTx(
  db: DatabaseSync,
  ended: () => boolean,
): { readonly tx: DatabaseSync; readonly mayHaveEnded: () => boolean } {
  let touched = false;
  const show = () => new SqliteTx();
  const runStatement =
    (statement: object) =>
    (key: string | symbol, method: Method, args: unknown[]): unknown => {
      if (!RUNS_AT_ONCE.has(key) && !SENDS_NOTHING.has(key)) touched = true;
      try {
        return Reflect.apply(method, statement, args);
      } catch (error) {
        // SQLite ends the transaction itself on some failures (and OR ROLLBACK, RAISE(ROLLBACK)).
        touched = true;
        throw error;
      }
    };
  const tx = guarded(
    db,
    ended,
    (key, method, args) => {
      if (key !== 'prepare' || !keepsTransaction(args[0])) touched = true;
      const answer: unknown = Reflect.apply(method, db, args);
      return key === 'prepare' && typeof answer === 'object' && answer !== null
        ? guarded(answer, ended, runStatement(answer), show)
        : answer;
    },
    show,
  );
  return { tx, mayHaveEnded: () => touched };
}
