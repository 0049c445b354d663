/**
 * The MySQL 8 / MariaDB 10.11 adapter over mysql2's promise pool, typed structurally so mysql2
 * is never imported.
 *
 * @module
 */
import { ConfigurationError } from '../core/errors/base.js';
import { rolledBack, settle, usedAfterRun, type SqlClient, type SqlSession } from './driver.js';

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
  const affected = typeof result === 'object' && result !== null && 'affectedRows' in result && typeof result.affectedRows === 'number' ? result.affectedRows : 0;
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

/** The session's isolation variable: MySQL 8 (and MariaDB 11.1+) name it `transaction_isolation`; MariaDB 10 only `tx_isolation`. */
type IsolationVariable = 'transaction_isolation' | 'tx_isolation';
// ER_UNKNOWN_SYSTEM_VARIABLE: a SET naming it changes nothing.
const UNKNOWN_VARIABLE = 1193;
// What COMMIT's check sets autocommit to when the claim is gone: refused (ER_WRONG_VALUE_FOR_VAR),
// so the whole SET fails and nothing commits.
const NOT_HELD = 'myr_gateway_claim_gone';

// ER_BINLOG_STMT_MODE_AND_ROW_ENGINE: a server logging statements refuses READ COMMITTED writes.
const STATEMENT_BINLOG = 1665;

const restoreOf = (isolation: IsolationVariable) =>
  `SESSION innodb_lock_wait_timeout = @myr_gateway_lwt, SESSION ${isolation} = @myr_gateway_iso, SESSION autocommit = @myr_gateway_ac`;

function notHeld(error: unknown): boolean {
  return typeof error === 'object' && error !== null && 'errno' in error && error.errno === 1231 && 'message' in error && String(error.message).includes(NOT_HELD);
}

const errnoOf = (error: unknown): unknown => (typeof error === 'object' && error !== null && 'errno' in error ? error.errno : undefined);
// ER_LOCK_DEADLOCK: InnoDB rolled the whole transaction back. ER_LOCK_WAIT_TIMEOUT: the statement,
// or the whole transaction when the server runs with innodb_rollback_on_timeout.
const DEADLOCK = 1213;
const LOCK_WAIT_TIMEOUT = 1205;
/** What the work's statements through `tx` told of the transaction. */
interface WorkSeen {
  /** A deadlock: the transaction, with the ledger's claim, was rolled back under the work. */
  deadlock: boolean;
  /** A lock wait timeout: the same, if the server rolls back on one. */
  lockWaitTimeout: boolean;
}
const TX_QUERIES = new Set<string | symbol>(['query', 'execute']);

/**
 * The work's `tx`: the pooled connection, whose `query` and `execute` note a deadlock or a lock
 * wait timeout (the work may catch it and go on, in a new transaction the next statement opens:
 * the claim gone, and the same key perhaps claimed and committed by a duplicate meanwhile), and
 * are refused (rejected, never sent) once the run has ended: the connection is then back in the
 * pool, where a statement would run on its own or in another callback's transaction. `release()`
 * does nothing: the ledger gives the connection back, and a second release would hand it out twice.
 */
function guardedTx<C extends Mysql2ConnectionLike>(conn: C, ended: () => boolean, seen: WorkSeen): C {
  const notice = (error: unknown) => {
    if (errnoOf(error) === DEADLOCK) seen.deadlock = true;
    if (errnoOf(error) === LOCK_WAIT_TIMEOUT) seen.lockWaitTimeout = true;
    throw error;
  };
  return new Proxy(conn, {
    get(target, key) {
      const value: unknown = Reflect.get(target, key);
      if (key === 'release') return () => undefined;
      if (typeof value !== 'function' || !TX_QUERIES.has(key)) return value;
      return (...args: unknown[]) => (ended() ? Promise.reject(usedAfterRun()) : Promise.resolve(Reflect.apply(value, target, args)).catch(notice));
    },
  });
}

/**
 * The ledger over a mysql2 promise pool (MySQL 8, MariaDB 10.11): each run checks a connection
 * out, and the handler's `tx` is that `PoolConnection` inside a READ COMMITTED transaction
 * (autocommit off until COMMIT; Postgres's default level, where the claim reads the payment's
 * mark without a lock). The connection's `innodb_lock_wait_timeout`, isolation level and
 * `autocommit` are set for the run and restored after it; the handler must not start or end a
 * transaction on `tx` itself. `tx` is a Proxy of the connection (same type, not the same object):
 * its `query` and `execute` are refused once the run has ended, and a deadlock they met (or a lock
 * wait timeout, on a server with `innodb_rollback_on_timeout`) fails the run even when the handler
 * caught it; its `release()` does nothing.
 *
 * @example
 * ```ts
 * import mysql from 'mysql2/promise';
 * const ledger = new SqlLedger(fromMysql2(mysql.createPool(process.env.DATABASE_URL)));
 * // onEvent: async (event, { tx }) => { await tx.query('UPDATE orders SET paid = 1 WHERE id = ?', [event.signed.reference_id]); }
 * ```
 */
export function fromMysql2<P extends Mysql2PoolLike>(pool: P, options: Mysql2LedgerOptions = {}): SqlClient<Mysql2ConnectionOf<P>> {
  if (typeof pool !== 'object' || pool === null || typeof pool.getConnection !== 'function') {
    throw new ConfigurationError("fromMysql2 takes a mysql2 promise pool (createPool from 'mysql2/promise'; for a callback pool, pass pool.promise())", 'pool');
  }
  const prepare = options.prepare ?? true;
  const send = (conn: Mysql2ConnectionLike, text: string, values: readonly unknown[]) =>
    prepare && values.length > 0 && conn.execute ? conn.execute(text, [...values]) : conn.query(text, [...values]);
  let isolation: IsolationVariable = 'transaction_isolation';
  // One round trip: autocommit off opens the transaction at the next statement (START TRANSACTION
  // would be a second). Whole seconds: MySQL's unit; the value is a checked integer.
  const open = async (conn: Mysql2ConnectionLike, lockTimeoutMs: number) => {
    // The name this statement uses: runs that start together all try it before any learns.
    const named = isolation;
    try {
      const text =
        `SET @myr_gateway_lwt = @@SESSION.innodb_lock_wait_timeout, @myr_gateway_ac = @@SESSION.autocommit, @myr_gateway_iso = @@SESSION.${named}, ` +
          `SESSION innodb_lock_wait_timeout = ${Math.ceil(lockTimeoutMs / 1000)}, SESSION ${named} = 'READ-COMMITTED', SESSION autocommit = 0`;
      // Prepared as well, though it has no parameters: parsing its six assignments costs the
      // server more than running them (about a tenth of its time per callback).
      await (prepare && conn.execute ? conn.execute(text, []) : conn.query(text));
    } catch (error) {
      if (named === 'tx_isolation' || typeof error !== 'object' || error === null || !('errno' in error) || error.errno !== UNKNOWN_VARIABLE) throw error;
      isolation = 'tx_isolation';
      await open(conn, lockTimeoutMs);
    }
  };
  return {
    dialect: 'mysql',
    commitChecked: true,
    async begin(lockTimeoutMs) {
      const conn = (await pool.getConnection()) as Mysql2ConnectionOf<P> & Mysql2ConnectionLike;
      let live = true;
      const release = () => {
        if (!live) return;
        live = false;
        // Queued behind nothing else of ours: the next user of the connection finds its own settings.
        void settle(conn.query(`SET ${restoreOf(isolation)}`));
        conn.release();
      };
      const destroy = () => {
        if (!live) return;
        live = false;
        conn.destroy();
      };
      try {
        await open(conn, lockTimeoutMs);
      } catch (error) {
        destroy();
        throw error;
      }
      const seen: WorkSeen = { deadlock: false, lockWaitTimeout: false };
      const session: SqlSession<Mysql2ConnectionOf<P>> = {
        tx: guardedTx(conn, () => !live, seen),
        async query(text, values) {
          try {
            const [result] = await send(conn, text, values);
            return resultOf(result);
          } catch (error) {
            if (typeof error === 'object' && error !== null && 'errno' in error && error.errno === STATEMENT_BINLOG) {
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
          // is gone (the work ended the transaction): then nothing of it commits.
          if (seen.deadlock) {
            await session.rollback();
            throw rolledBack("nothing: a statement of the work met a deadlock (1213), which rolled back the ledger's claim with the transaction, and the work went on");
          }
          // A lock wait timeout the work caught took the claim along only on such a server.
          const kept = seen.lockWaitTimeout ? ' AND @@GLOBAL.innodb_rollback_on_timeout = 0' : '';
          const commit = held ? `IF(EXISTS(${held.text})${kept}, 'ON', '${NOT_HELD}')` : "'ON'";
          try {
            await send(conn, `SET SESSION autocommit = ${commit}, ${restoreOf(isolation)}`, held?.params ?? []);
          } catch (error) {
            if (!notHeld(error)) {
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
          try {
            await conn.query('ROLLBACK');
            release();
          } catch {
            destroy();
          }
        },
        abandon() {
          // Closing the connection makes the server roll the transaction back at once.
          destroy();
        },
      };
      return session;
    },
  };
}
