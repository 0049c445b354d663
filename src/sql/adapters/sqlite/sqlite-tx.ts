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

/**
 * The connection's methods whose effect outlasts the run (something bound to the connection
 * handed out, or the connection itself changed), refused through `tx`: a tag store kept past the
 * run would write into a later run's transaction, and one left half-read would keep SQLite from
 * committing anything.
 */
const OUTLASTS_THE_RUN = new Set<string | symbol>([
  'createTagStore',
  'createSession',
  'function',
  'aggregate',
  'setAuthorizer',
  'deserialize',
  'applyChangeset',
  'loadExtension',
  'enableLoadExtension',
]);

/** What a method whose effect outlasts the run is refused with (nothing done). */
function outlastsRefused(key: string | symbol): ConfigurationError {
  return new ConfigurationError(
    `tx.${String(key)} is refused: tx is the ledger's own SQLite connection for this run only, and what ${String(key)} does would outlast the run; use tx.prepare and tx.exec, or your own DatabaseSync`,
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

const show = () => new SqliteTx();

/**
 * The work's `tx` over the ledger's connection `db` for one run, usable until the adapter sets
 * `ended` (`prepare` answers a statement guarded the same way), and whether COMMIT must check
 * that the transaction is still the ledger's (`mayHaveEnded`). A class, not closures: one per
 * run, and closures made per run are work per callback.
 *
 * @example
 * ```ts
 * const guard = new SqliteTxGuard(db);
 * work(guard.tx);
 * guard.ended = true; // the run is over: guard.tx refuses from now on
 * ```
 */
export class SqliteTxGuard {
  /** Set by the adapter when the run ends: every call through `tx` is refused from then on. */
  ended = false;
  /** Whether the work did something through `tx` that may have ended the ledger's transaction. */
  mayHaveEnded = false;
  readonly tx: DatabaseSync;
  readonly #iterators: { return: () => unknown }[] = [];

  constructor(db: DatabaseSync) {
    this.tx = secretFree(db, show, new Guarded(db, this, false));
  }

  /** Runs a method of the connection: anything but preparing a plain statement is noted; a statement comes back guarded. */
  onConnection(db: object, key: string | symbol, method: Method, args: unknown[]): unknown {
    if (key !== 'prepare' || !keepsTransaction(args[0])) this.mayHaveEnded = true;
    const answer: unknown = Reflect.apply(method, db, args);
    return key === 'prepare' && typeof answer === 'object' && answer !== null
      ? secretFree(answer, show, new Guarded(answer, this, true))
      : answer;
  }

  /**
   * Ends every iterator the work opened through `tx` (once its run is over): one left half-read
   * keeps its statement running, and SQLite then refuses COMMIT, RELEASE and SAVEPOINT on the
   * connection, every later run's included. Ended, it answers `done` and runs nothing more.
   */
  endIterators(): void {
    for (const iterator of this.#iterators.splice(0)) {
      try {
        iterator.return();
      } catch {
        // Its statement failed already: nothing runs.
      }
    }
  }

  /** Runs a method of a statement the work prepared: what may end the transaction is noted. */
  onStatement(statement: object, key: string | symbol, method: Method, args: unknown[]): unknown {
    if (!RUNS_AT_ONCE.has(key) && !SENDS_NOTHING.has(key)) this.mayHaveEnded = true;
    try {
      const answer: unknown = Reflect.apply(method, statement, args);
      if (typeof answer === 'object' && answer !== null && 'return' in answer && typeof answer.return === 'function')
        this.#iterators.push({ return: answer.return.bind(answer) as () => unknown });
      return answer;
    } catch (error) {
      // SQLite ends the transaction itself on some failures (and OR ROLLBACK, RAISE(ROLLBACK)).
      this.mayHaveEnded = true;
      throw error;
    }
  }
}

/** The `get` trap of the connection's or a statement's Proxy: each method refused once the run ended, `close()` always. */
class Guarded<T extends object> {
  readonly #target: T;
  readonly #guard: SqliteTxGuard;
  readonly #statement: boolean;

  constructor(target: T, guard: SqliteTxGuard, statement: boolean) {
    this.#target = target;
    this.#guard = guard;
    this.#statement = statement;
  }

  get(_: T, key: string | symbol): unknown {
    if (showsItself(key)) return show;
    const target = this.#target;
    const value: unknown = Reflect.get(target, key, target);
    if (typeof value !== 'function') return value;
    const guard = this.#guard;
    const statement = this.#statement;
    return (...args: unknown[]) => {
      if (key === 'close') throw closeRefused();
      if (!statement && OUTLASTS_THE_RUN.has(key)) throw outlastsRefused(key);
      if (guard.ended) throw usedAfterRun();
      return statement
        ? guard.onStatement(target, key, value as Method, args)
        : guard.onConnection(target, key, value as Method, args);
    };
  }
}
