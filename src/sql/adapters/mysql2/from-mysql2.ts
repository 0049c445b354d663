/**
 * The MySQL 8 / MariaDB 10.11 adapter over mysql2's promise pool, typed structurally so mysql2
 * is never imported.
 *
 * @module
 */
import { ConfigurationError } from '../../../core/errors/base.js';
import {
  claimGone,
  commitAndRestore,
  refusedByStatementBinlog,
  restore,
  saveAndBound,
  unknownVariable,
  type IsolationVariable,
} from '../../dialects/mysql/session.js';
import { rolledBack, type SqlClient, type SqlSession } from '../../sql-client.js';
import { preparing } from '../adapter-options.js';
import { workTx } from './mysql2-tx.js';

/** A mysql2 promise connection checked out of a pool (`PoolConnection`), as the ledger drives it. */
export interface Mysql2ConnectionLike {
  /** Sends one statement; `?` placeholders take `values` (escaped by mysql2). */
  query(sql: string, values?: unknown): Promise<[unknown, unknown]>;
  /** Sends one statement as a server-side prepared statement (prepared once per connection by mysql2). */
  execute?(sql: string, values?: unknown): Promise<[unknown, unknown]>;
  /** Gives the connection back to its pool. */
  release(): void;
  /** Closes the connection (the server rolls back its transaction). */
  destroy(): void;
}

/** The callback connection under a mysql2 promise connection (its `connection`), as the ledger sends through it. */
interface Mysql2CallbackConnectionLike {
  query(sql: string, values: unknown[], done: (error: unknown, result?: unknown) => void): unknown;
  execute(sql: string, values: unknown[], done: (error: unknown, result?: unknown) => void): unknown;
}

/** How the ledger sends its own statements on one connection: `execute` prepared, `query` parsed each time. */
interface LedgerSend {
  (how: 'query' | 'execute', text: string, values: readonly unknown[]): Promise<unknown>;
}

function isCallbackConnection(value: unknown): value is Mysql2CallbackConnectionLike {
  return (
    typeof value === 'object' &&
    value !== null &&
    'query' in value &&
    typeof value.query === 'function' &&
    'execute' in value &&
    typeof value.execute === 'function'
  );
}

/**
 * The ledger's own statements go to mysql2's callback connection under the promise one when
 * there is one: its promise wrapper captures a stack trace per statement (`trace`, on by
 * default), which the ledger's errors never show, and that was a tenth of the Node side's CPU per
 * callback. The merchant's `tx` is still the promise connection, untouched.
 */
function ledgerSend(conn: Mysql2ConnectionLike): LedgerSend {
  const core: unknown = 'connection' in conn ? conn.connection : undefined;
  if (isCallbackConnection(core)) {
    return (how, text, values) =>
      new Promise((resolve, reject) =>
        core[how](text, [...values], (error: unknown, result?: unknown) => {
          // mysql2 answers null on success; a failure is passed on as it came (its errno is read).
          const failure: unknown = error;
          if (error) reject(failure);
          else resolve(result);
        }),
      );
  }
  return async (how, text, values) =>
    (await (how === 'execute' && conn.execute ? conn.execute(text, [...values]) : conn.query(text, [...values])))[0];
}

/** A mysql2 promise `Pool` (`mysql.createPool(…)` from `mysql2/promise`). */
export interface Mysql2PoolLike {
  /** Checks a connection out. */
  getConnection(): Promise<Mysql2ConnectionLike>;
}

/** The connection type a mysql2 pool hands out. */
export type Mysql2ConnectionOf<P> = P extends {
  /** mysql2's `pool.getConnection()`. */
  getConnection(): Promise<infer C>;
}
  ? C
  : never;

function resultOf(result: unknown): { rows: readonly Record<string, unknown>[]; affected: number } {
  if (Array.isArray(result)) return { rows: result, affected: 0 };
  const affected =
    typeof result === 'object' && result !== null && 'affectedRows' in result && typeof result.affectedRows === 'number'
      ? result.affectedRows
      : 0;
  return { rows: [], affected };
}

/** Options of {@link fromMysql2}. */
export interface Mysql2LedgerOptions {
  /**
   * Whether the ledger's statements on the callback's path (the one that saves and sets the
   * connection's settings, the claim, COMMIT with its check) go through mysql2's `execute`
   * (prepared once per connection, by mysql2's statement cache) instead of being parsed at each
   * callback: their sub-selects and assignments cost the server more to parse than to run. Turn
   * it off behind a proxy that cannot keep prepared statements (the merchant's statements through
   * `tx` are untouched either way).
   *
   * @default true
   * @example
   * ```ts
   * fromMysql2(pool, { prepare: false });
   * ```
   */
  prepare?: boolean | undefined;
}

/**
 * The ledger over a mysql2 promise pool (MySQL 8, MariaDB 10.11): each run checks a connection
 * out, and the handler's `tx` is that `PoolConnection` inside a READ COMMITTED transaction
 * (autocommit off until COMMIT; Postgres's default level, where the claim reads the payment's
 * mark without a lock). The connection's `innodb_lock_wait_timeout`, isolation level and
 * `autocommit` are set for the run and restored after it; the handler must not start or end a
 * transaction on `tx` itself. `tx` is a Proxy of the connection (same type, not the same object,
 * see mysql2-tx.ts): its statements are refused once the run has ended (they reject, nothing is
 * sent), so are `beginTransaction`, `commit`, `rollback` and `changeUser`; a deadlock they met
 * (or a lock wait timeout, on a server with `innodb_rollback_on_timeout`) fails the run even when
 * the handler caught it; its `release()` does nothing. A log (`console.log`, `JSON.stringify`)
 * shows it as `MysqlTx { threadId }`, never the connection's config and password.
 *
 * @example
 * ```ts
 * import mysql from 'mysql2/promise';
 * const ledger = new SqlLedger(fromMysql2(mysql.createPool(process.env.DATABASE_URL)));
 * // onEvent: async (event, { tx }) => { await tx.query('UPDATE orders SET paid = 1 WHERE id = ?', [event.signed.reference_id]); }
 * ```
 */
export function fromMysql2<P extends Mysql2PoolLike>(
  pool: P,
  options: Mysql2LedgerOptions = {},
): SqlClient<Mysql2ConnectionOf<P>> {
  if (typeof pool !== 'object' || pool === null || typeof pool.getConnection !== 'function') {
    throw new ConfigurationError(
      "fromMysql2 takes a mysql2 promise pool (createPool from 'mysql2/promise'; for a callback pool, pass pool.promise())",
      'pool',
    );
  }
  const prepare = preparing(options);
  const how = (values: readonly unknown[]) => (prepare && values.length > 0 ? 'execute' : 'query');
  let isolation: IsolationVariable = 'transaction_isolation';
  const open = async (send: LedgerSend, lockTimeoutMs: number) => {
    // The name this statement uses: runs that start together all try it before any learns.
    const named = isolation;
    try {
      // Prepared as well, though it has no parameters: parsing its six assignments costs the
      // server more than running them (about a tenth of its time per callback).
      await send(prepare ? 'execute' : 'query', saveAndBound(lockTimeoutMs, named), []);
    } catch (error) {
      if (named === 'tx_isolation' || !unknownVariable(error)) throw error;
      isolation = 'tx_isolation';
      await open(send, lockTimeoutMs);
    }
  };
  return {
    dialect: 'mysql',
    commitChecked: true,
    async begin(lockTimeoutMs) {
      const conn = (await pool.getConnection()) as Mysql2ConnectionOf<P> & Mysql2ConnectionLike;
      const send = ledgerSend(conn);
      let live = true;
      // The connection goes back to the pool only with its own settings restored: one whose
      // restore failed (a KILL QUERY landing on it) would keep autocommit off, and the next
      // user's writes would never commit. It is closed instead.
      const release = async () => {
        if (!live) return;
        live = false;
        try {
          await send('query', restore(isolation), []);
          conn.release();
        } catch {
          conn.destroy();
        }
      };
      const destroy = () => {
        if (!live) return;
        live = false;
        conn.destroy();
      };
      try {
        await open(send, lockTimeoutMs);
      } catch (error) {
        destroy();
        throw error;
      }
      const work = workTx(conn);
      const session: SqlSession<Mysql2ConnectionOf<P>> = {
        tx: work.tx,
        async query(text, values) {
          try {
            return resultOf(await send(how(values), text, values));
          } catch (error) {
            if (refusedByStatementBinlog(error)) {
              throw new ConfigurationError(
                "the ledger's transaction on MySQL is READ COMMITTED, which this server's binlog_format=STATEMENT refuses for InnoDB writes: set binlog_format to ROW or MIXED (the defaults of MySQL 8 and MariaDB)",
                'binlog_format',
              );
            }
            throw error;
          }
        },
        async commit(held) {
          // COMMIT, its check and the restore in one round trip: turning autocommit on commits the
          // open transaction (and answers an error when that commit fails), before the connection's
          // own settings are put back. The check refuses the whole statement when the claim's row
          // is gone (the work ended the transaction): then nothing of it commits. It is needed only
          // when the work did something through tx that may have ended the transaction (see
          // mysql2-tx.ts): otherwise nothing was sent on the connection since the claim but plain
          // reads and writes that succeeded, and a transaction nobody touches is not rolled back
          // while its connection lives (a server that kills it fails this statement instead).
          // A deadlock the work met rolled the claim back with the transaction: known gone without
          // the check (which would not find it either: a duplicate's claim has another claim_id).
          if (work.met.deadlock) {
            await session.rollback();
            throw rolledBack(
              "nothing: a statement of the work met a deadlock (1213), which rolled back the ledger's claim with the transaction, and the work went on",
            );
          }
          const checked = held !== undefined && work.mayHaveEnded();
          work.end();
          // A lock wait timeout the work caught took the claim along only on such a server.
          const check = checked ? { text: held.text, rollbackOnTimeoutOff: work.met.lockWaitTimeout } : undefined;
          try {
            // Prepared with or without the check's parameters, as the statement that opened the run.
            await send(prepare ? 'execute' : 'query', commitAndRestore(isolation, check), checked ? held.params : []);
          } catch (error) {
            if (!claimGone(error)) {
              destroy();
              throw error;
            }
            await session.rollback();
            throw rolledBack("that the ledger's claim was gone (the work had ended the transaction itself)");
          }
          live = false;
          conn.release();
        },
        async rollback() {
          work.end();
          try {
            await send('query', 'ROLLBACK', []);
          } catch {
            destroy();
            return;
          }
          await release();
        },
        abandon() {
          // Closing the connection makes the server roll the transaction back at once.
          work.end();
          destroy();
        },
      };
      return session;
    },
  };
}
