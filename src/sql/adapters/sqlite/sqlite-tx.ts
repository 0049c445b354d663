/**
 * What the work may do with its SQLite `tx`: the ledger's own connection, for the run's time
 * only. Once the run has ended (committed, rolled back, or timed out and rolled back at once), the
 * same connection runs the next run's transaction or statements in autocommit: a statement the
 * work sends after that would join another callback's transaction or commit on its own. So every
 * call of `tx`, and of the statements the work prepared through it, is refused then (a
 * ConfigurationError thrown, nothing sent); `close()` is always refused (the connection is the
 * ledger's).
 *
 * @module
 */
import type { DatabaseSync } from 'node:sqlite';
import { ConfigurationError } from '../../../core/errors/base.js';
import { usedAfterRun } from '../../sql-client.js';
import { secretFree, showsItself } from '../tx/secret-free.js';

/** What `tx` shows of itself in a log: which kind of connection, never more. */
class SqliteTx {
  readonly connection = "the ledger's own SQLite connection";
}

/** What `close()` through `tx` is refused with: the connection outlives the run. */
function closeRefused(): ConfigurationError {
  return new ConfigurationError("tx is the ledger's own SQLite connection, which the ledger keeps open: close your own DatabaseSync, never tx", 'tx');
}

/** `target`'s methods, each refused once `ended()`, each answer guarded by `wrap` (bound to `target`). */
function guarded<T extends object>(target: T, ended: () => boolean, wrap: (key: string | symbol, answer: unknown) => unknown, show: () => object): T {
  return secretFree(target, show, {
    get(_, key) {
      if (showsItself(key)) return show;
      const value: unknown = Reflect.get(target, key, target);
      if (typeof value !== 'function') return value;
      return (...args: unknown[]) => {
        if (key === 'close') throw closeRefused();
        if (ended()) throw usedAfterRun();
        return wrap(key, Reflect.apply(value, target, args));
      };
    },
  });
}

/**
 * The work's `tx` over the ledger's connection `db`: usable while `ended()` is false; `prepare`
 * answers a statement guarded the same way.
 *
 * @example
 * ```ts
 * let ended = false;
 * const tx = sqliteTx(db, () => ended);
 * ```
 */
export function sqliteTx(db: DatabaseSync, ended: () => boolean): DatabaseSync {
  const show = () => new SqliteTx();
  const statement = (key: string | symbol, answer: unknown) => (key === 'prepare' && typeof answer === 'object' && answer !== null ? guarded(answer, ended, (_, result) => result, show) : answer);
  return guarded(db, ended, statement, show);
}
