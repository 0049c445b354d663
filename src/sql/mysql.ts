/**
 * The MySQL 8 / MariaDB 10.11 adapter over mysql2's promise pool, typed structurally so mysql2
 * is never imported.
 *
 * @module
 */
import { ConfigurationError } from '../core/errors/base.js';
import { settle, type SqlClient, type SqlSession } from './driver.js';

/** A mysql2 promise connection checked out of a pool (`PoolConnection`), as the ledger drives it. */
export interface Mysql2ConnectionLike {
  /** Sends one statement; `?` placeholders take `values` (escaped by mysql2). */
  query(sql: string, values?: unknown): Promise<[unknown, unknown]>;
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

const RESTORE = 'SET SESSION innodb_lock_wait_timeout = @myr_gateway_lwt, SESSION autocommit = @myr_gateway_ac';
const COMMIT_AND_RESTORE = 'SET SESSION autocommit = 1, SESSION innodb_lock_wait_timeout = @myr_gateway_lwt, SESSION autocommit = @myr_gateway_ac';

/**
 * The ledger over a mysql2 promise pool (MySQL 8, MariaDB 10.11): each run checks a connection
 * out, and the handler's `tx` is that `PoolConnection` inside a transaction (autocommit off until
 * COMMIT). The connection's `innodb_lock_wait_timeout` and `autocommit` are set for the run and
 * restored after it; the handler must not start or end a transaction on `tx` itself.
 *
 * @example
 * ```ts
 * import mysql from 'mysql2/promise';
 * const ledger = new SqlLedger(fromMysql2(mysql.createPool(process.env.DATABASE_URL)));
 * // onEvent: async (event, { tx }) => { await tx.query('UPDATE orders SET paid = 1 WHERE id = ?', [event.signed.reference_id]); }
 * ```
 */
export function fromMysql2<P extends Mysql2PoolLike>(pool: P): SqlClient<Mysql2ConnectionOf<P>> {
  if (typeof pool !== 'object' || pool === null || typeof pool.getConnection !== 'function') {
    throw new ConfigurationError("fromMysql2 takes a mysql2 promise pool (createPool from 'mysql2/promise'; for a callback pool, pass pool.promise())", 'pool');
  }
  return {
    dialect: 'mysql',
    async begin(lockTimeoutMs) {
      const conn = (await pool.getConnection()) as Mysql2ConnectionOf<P> & Mysql2ConnectionLike;
      let open = true;
      const release = () => {
        if (!open) return;
        open = false;
        // Queued behind nothing else of ours: the next user of the connection finds its own setting.
        void settle(conn.query(RESTORE));
        conn.release();
      };
      const destroy = () => {
        if (!open) return;
        open = false;
        conn.destroy();
      };
      try {
        // One round trip: autocommit off opens the transaction at the next statement (START
        // TRANSACTION would be a second). Whole seconds: MySQL's unit; the value is a checked integer.
        await conn.query(
          'SET @myr_gateway_lwt = @@SESSION.innodb_lock_wait_timeout, @myr_gateway_ac = @@SESSION.autocommit, ' +
            `SESSION innodb_lock_wait_timeout = ${Math.ceil(lockTimeoutMs / 1000)}, SESSION autocommit = 0`,
        );
      } catch (error) {
        destroy();
        throw error;
      }
      const session: SqlSession<Mysql2ConnectionOf<P>> = {
        tx: conn,
        async query(text, values) {
          const [result] = await conn.query(text, [...values]);
          return resultOf(result);
        },
        async commit() {
          try {
            // COMMIT and the restore in one round trip: turning autocommit on commits the open
            // transaction (and answers an error when that commit fails), before the connection's
            // own autocommit is put back.
            await conn.query(COMMIT_AND_RESTORE);
          } catch (error) {
            destroy();
            throw error;
          }
          open = false;
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
