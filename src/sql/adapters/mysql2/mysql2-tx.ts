/**
 * What the work may do with its mysql2 `tx`, and whether COMMIT must check that the transaction is
 * still the ledger's. The work's `tx` is the run's `PoolConnection` behind a Proxy that sees every
 * statement sent through it: once the run has ended, statements (and those of a statement it
 * prepared) are refused (never sent: the connection is back in the pool, maybe in another run's
 * transaction); while it runs, anything that may have ended the transaction (a statement that
 * failed, which on MySQL can roll the whole transaction back; one that is not a plain read or
 * write, or may carry another in a raw value; a method that is not a statement; the callback
 * connection underneath) is noted, and COMMIT then checks the claim (from-mysql2.ts); a deadlock a
 * statement met (or a lock wait timeout) is noted apart, even when the work caught it. The work
 * cannot give the connection back (`release`, `end`, `await using`), nor begin or end a
 * transaction on it: the ledger does. What the work sent is counted by commit-check.ts; a log
 * shows `tx` as `MysqlTx { threadId }`, never the connection's config (secret-free.ts).
 *
 * @module
 */
import { ConfigurationError } from '../../../core/errors/base.js';
import { CommitCheck } from '../tx/commit-check.js';
import { usedAfterRun } from '../../sql-client.js';
import { secretFree, showsItself } from '../tx/secret-free.js';

/**
 * mysql2's ways to give a pooled connection back, as the work finds them on `tx`: `release`, `end`
 * (which releases a pooled connection) and `[Symbol.asyncDispose]` (what `await using` calls).
 * The ledger gives the connection back when the run ends; given back by the work, it would serve
 * another run in the middle of this one's transaction. Each does nothing, with mysql2's answer.
 */
const GIVES_BACK = new Map<string | symbol, () => unknown>([
  ['release', () => undefined],
  ['end', () => Promise.resolve()],
  [Symbol.asyncDispose, () => Promise.resolve()],
]);

/** Whether mysql2's `query(first, values)` is given values to put in the text (`?` or named placeholders). */
function hasValues(first: unknown, values: unknown): boolean {
  return (
    values !== undefined || (typeof first === 'object' && first !== null && Reflect.get(first, 'values') !== undefined)
  );
}

/**
 * Whether the connection sends several statements in one `query` (`multipleStatements`): then a
 * value that is raw SQL (`mysql.raw`, any `toSqlString`) may add a statement after `;` that the
 * text does not show, so a `query` with values is not taken for plain (`execute` binds its values).
 */
function runsSeveral(connection: object): boolean {
  const config: unknown = Reflect.get(connection, 'config');
  return typeof config === 'object' && config !== null && Reflect.get(config, 'multipleStatements') === true;
}

/**
 * mysql2's methods that begin or end a transaction, or start a new session (autocommit back on):
 * the ledger's transaction is begun and ended by the ledger, so they are refused (nothing sent).
 */
const TRANSACTION_CONTROL = new Set<string | symbol>(['beginTransaction', 'commit', 'rollback', 'changeUser']);
/** mysql2's other methods that answer a promise: after the run they reject; the rest do nothing then. */
const ANSWERS_PROMISE = new Set<string | symbol>(['prepare', 'ping', 'connect', 'reset']);

const controlRefused = () =>
  new ConfigurationError(
    "the ledger begins and ends the handler's transaction: do not begin, commit or roll back tx, nor change its user (nothing was sent)",
    'tx',
  );

/** The members of a mysql2 connection that send nothing: the work may use them as it likes. */
const SENDS_NOTHING = new Set<string | symbol>(['escape', 'escapeId', 'format', 'threadId', 'config', 'state']);

// ER_LOCK_DEADLOCK: InnoDB rolled the whole transaction back. ER_LOCK_WAIT_TIMEOUT: the statement,
// or the whole transaction when the server runs with innodb_rollback_on_timeout.
const DEADLOCK = 1213;
const LOCK_WAIT_TIMEOUT = 1205;

/** What a failed statement of the work told of the transaction (the work may have caught it and gone on). */
export interface WorkMet {
  /** A deadlock: the transaction, with the ledger's claim, was rolled back under the work. */
  deadlock: boolean;
  /** A lock wait timeout: the same, if the server rolls back on one. */
  lockWaitTimeout: boolean;
}

/** What `tx` shows of itself in a log (util.inspect) or in JSON: which connection it is, never its config (with the password). */
class MysqlTx {
  constructor(
    /** The connection's id on the server (mysql2's `threadId`). */
    readonly threadId: unknown,
  ) {}
}

/** What a statement prepared through `tx` shows of itself: nothing of the connection it holds (its config, with the password). */
class MysqlPreparedStatement {}
const showPrepared = () => new MysqlPreparedStatement();

/** The work's `tx` and what the ledger learns from it. */
export interface WorkTx<C extends object> {
  /** The connection behind the Proxy, given to the work. */
  readonly tx: C;
  /** What the work's failed statements met: a deadlock or a lock wait timeout, caught or not. */
  readonly met: Readonly<WorkMet>;
  /** Whether something sent or done through `tx` may have ended the ledger's transaction (or is still running). */
  mayHaveEnded(): boolean;
  /** The run is over: from now on `tx` sends nothing. */
  end(): void;
}

/**
 * Wraps the run's connection for the work. Statements go to the connection as they are; the
 * Proxy only counts them and what became of them, so the merchant's results and errors are
 * mysql2's own.
 */
export function workTx<C extends object>(connection: C): WorkTx<C> {
  let ended = false;
  const met: WorkMet = { deadlock: false, lockWaitTimeout: false };
  // Any failed statement may have rolled the transaction back on MySQL; these two did, or may have.
  const check = new CommitCheck((error) => {
    const errno: unknown = typeof error === 'object' && error !== null ? Reflect.get(error, 'errno') : undefined;
    if (errno === DEADLOCK) met.deadlock = true;
    if (errno === LOCK_WAIT_TIMEOUT) met.lockWaitTimeout = true;
    return true;
  });
  const several = runsSeveral(connection);
  /** `query` or `execute`: sent as it is, counted until it settles. */
  const statement =
    (send: unknown, formats: boolean) =>
    (...args: unknown[]): unknown =>
      ended
        ? Promise.reject(usedAfterRun())
        : check.send(send, connection, args, formats && several && hasValues(args[0], args[1]));
  /**
   * The callback connection underneath (`connection`, however it is read) sends past the Proxy:
   * noted; after the run it is back in the pool, so it is not handed out.
   */
  const reach = () => {
    if (ended) throw usedAfterRun();
    check.touch();
  };
  /**
   * A statement prepared through `tx` executes on the run's connection: kept by the work (to
   * reuse in later callbacks), it would send there after the run, when the connection is back in
   * the pool. Its methods are refused then, as `tx`'s are.
   */
  const preparedStatement = (statement: unknown): unknown =>
    typeof statement !== 'object' || statement === null
      ? statement
      : secretFree(statement, showPrepared, {
          get(_, key) {
            if (showsItself(key)) return showPrepared;
            const value: unknown = Reflect.get(statement, key);
            if (typeof value !== 'function') return value;
            return (...args: unknown[]): unknown =>
              ended ? Promise.reject(usedAfterRun()) : Reflect.apply(value, statement, args);
          },
        });
  const show = () => new MysqlTx(Reflect.get(connection, 'threadId'));
  // The traps work on the connection itself: the target only changes what util.inspect shows.
  const tx: C = secretFree(connection, show, {
    get(_, key) {
      if (showsItself(key)) return show;
      const value: unknown = Reflect.get(connection, key);
      // Called on the connection itself: mysql2's escape and format read `this.connection`,
      // which through the Proxy would count as a reach underneath (and be refused after the run).
      if (SENDS_NOTHING.has(key))
        return typeof value === 'function'
          ? (...args: unknown[]): unknown => Reflect.apply(value, connection, args)
          : value;
      if (typeof value !== 'function') {
        if (typeof value === 'object' && value !== null) reach();
        return value;
      }
      if (key === 'query' || key === 'execute') return statement(value, key === 'query');
      const givesBack = GIVES_BACK.get(key);
      if (givesBack) return givesBack;
      if (TRANSACTION_CONTROL.has(key)) return () => Promise.reject(ended ? usedAfterRun() : controlRefused());
      return (...args: unknown[]) => {
        // After the run the connection is no longer the work's: a method that answers a promise
        // rejects; any other (destroy, pause, an EventEmitter's) does nothing, for a rejection
        // nobody awaits would end the process.
        if (ended) return ANSWERS_PROMISE.has(key) ? Promise.reject(usedAfterRun()) : undefined;
        check.touch();
        const answer: unknown = Reflect.apply(value, connection, args);
        if (key === 'prepare' && answer instanceof Promise) return answer.then(preparedStatement);
        // EventEmitter's methods answer the connection itself, for chaining: the work gets tx.
        return answer === connection ? tx : answer;
      };
    },
    // What copies the connection's properties (Object.getOwnPropertyDescriptors, …) reads them here.
    // After the run the value is not handed out, but listing the properties still works.
    getOwnPropertyDescriptor(_, key) {
      const described = Reflect.getOwnPropertyDescriptor(connection, key);
      const value: unknown = described?.value;
      if (described === undefined || typeof value !== 'object' || value === null) return described;
      // (secretFree reports every property configurable, so its value may differ from the connection's.)
      if (ended) return { ...described, value: undefined };
      check.touch();
      return described;
    },
  });
  return {
    tx,
    met,
    mayHaveEnded: () => check.needed(),
    end: () => void (ended = true),
  };
}
