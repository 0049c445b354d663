/**
 * The Kysely adapter (0.28+, PostgresDialect or MysqlDialect): each run is one controlled
 * transaction (`db.startTransaction()`), the handler's `tx` is that `ControlledTransaction`, and
 * the ledger's statements go through it as raw compiled queries. Typed structurally: Kysely is
 * never imported.
 *
 * @module
 */
import { ConfigurationError } from '../../../core/errors/base.js';
import { settle, type SqlClient, type SqlSession } from '../../sql-client.js';
import { isRecord, ormDialect, rowsOf } from '../adapter-options.js';
import { boundLockWaits, isolationFor, type RawQuery } from '../orm-transaction.js';

/** A Kysely transaction started with `db.startTransaction().execute()`, as the ledger drives it. */
export interface KyselyTransactionLike {
  /** Runs one compiled query on the transaction's connection. */
  executeQuery(query: {
    readonly sql: string;
    readonly parameters: readonly unknown[];
    readonly query: {
      readonly kind: 'RawNode';
      readonly sqlFragments: readonly string[];
      readonly parameters: readonly never[];
    };
    readonly queryId: { readonly queryId: string };
  }): Promise<{
    /** The rows of a SELECT. */
    readonly rows: unknown[];
    /** Rows inserted, updated or deleted. */
    readonly numAffectedRows?: bigint | undefined;
  }>;
  /** COMMIT. */
  commit(): {
    /** Sends it. */
    execute(): Promise<unknown>;
  };
  /** ROLLBACK. */
  rollback(): {
    /** Sends it. */
    execute(): Promise<unknown>;
  };
}

/** A Kysely instance (0.28+) on its Postgres or MySQL dialect. */
export interface KyselyLike {
  /** Starts a transaction the caller commits or rolls back. */
  startTransaction(): {
    /** Sends BEGIN; answers the transaction. */
    execute(): Promise<KyselyTransactionLike>;
    /** The transaction's isolation level (MySQL: READ COMMITTED, where the claim reads without a lock). */
    setIsolationLevel(level: 'read committed'): {
      /** Sends it, and BEGIN; answers the transaction. */
      execute(): Promise<KyselyTransactionLike>;
    };
  };
}

/** The transaction type of a Kysely instance. */
export type KyselyTxOf<K> = K extends {
  /** Kysely's `startTransaction()`. */
  startTransaction(): {
    /** Sends BEGIN; answers the transaction. */
    execute(): Promise<infer T>;
  };
}
  ? T
  : never;

let queries = 0;

function kyselyDialect(db: object): unknown {
  // PostgresAdapter / MysqlAdapter, read from the executor; a bundle that renames classes gives the dialect instead.
  const executor: unknown =
    'getExecutor' in db && typeof db.getExecutor === 'function' ? Reflect.apply(db.getExecutor, db, []) : undefined;
  const name = isRecord(executor) && isRecord(executor.adapter) ? executor.adapter.constructor.name : undefined;
  return name === 'PostgresAdapter' ? 'postgres' : name === 'MysqlAdapter' ? 'mysql' : undefined;
}

/**
 * The ledger over Kysely (0.28+, PostgresDialect or MysqlDialect): each run starts a controlled
 * transaction, and the handler's `tx` is that Kysely `ControlledTransaction`. The dialect is read
 * from the instance; give it as the second argument when that fails (a bundle that renames
 * classes).
 *
 * @example
 * ```ts
 * const ledger = new SqlLedger(fromKysely(db));
 * // onEvent: async (event, { tx }) => { await tx.updateTable('orders').set({ paid: true }).where('id', '=', event.signed.reference_id).execute(); }
 * ```
 */
export function fromKysely<K extends KyselyLike>(db: K, dialect?: 'postgres' | 'mysql'): SqlClient<KyselyTxOf<K>> {
  if (!isRecord(db) && typeof db !== 'function')
    throw new ConfigurationError('fromKysely takes a Kysely instance (0.28 or later)', 'db');
  if (typeof db.startTransaction !== 'function')
    throw new ConfigurationError('fromKysely takes a Kysely instance (0.28 or later: it needs startTransaction)', 'db');
  const chosen = ormDialect(
    dialect,
    kyselyDialect(db),
    'fromKysely could not tell the dialect of this Kysely instance',
  );
  return {
    dialect: chosen,
    async begin(lockTimeoutMs) {
      const builder = db.startTransaction();
      const isolation = isolationFor(chosen);
      const trx = (await (isolation ? builder.setIsolationLevel(isolation) : builder).execute()) as KyselyTxOf<K> &
        KyselyTransactionLike;
      const query: RawQuery = async (text, parameters) => {
        const result = await trx.executeQuery({
          sql: text,
          parameters,
          query: { kind: 'RawNode', sqlFragments: [text], parameters: [] },
          queryId: { queryId: `myr-gateway-ledger-${++queries}` },
        });
        return { rows: rowsOf(result.rows), affected: Number(result.numAffectedRows ?? 0) };
      };
      const rollback = () => settle(trx.rollback().execute());
      let end: ((commit: boolean) => Promise<void>) | undefined;
      try {
        end = await boundLockWaits(chosen, query, lockTimeoutMs);
      } catch (error) {
        await rollback();
        throw error;
      }
      const session: SqlSession<KyselyTxOf<K>> = {
        tx: trx,
        query,
        async commit() {
          try {
            await end?.(true);
          } catch (error) {
            await rollback();
            throw error;
          }
          try {
            await trx.commit().execute();
          } catch (error) {
            // Kysely gives the connection back after a failed COMMIT only when it reads the
            // error as an aborted transaction; a deadlock or a deferred constraint broken at
            // COMMIT would keep it out of the pool for ever. The ROLLBACK gives it back (or is
            // refused: given back).
            await rollback();
            throw error;
          }
        },
        async rollback() {
          await end?.(false);
          await rollback();
        },
        abandon() {
          // Rolled back now, not once the work settles: a handler stuck on a lock this transaction
          // holds (a write through the app's own db instead of tx) would otherwise hold both
          // connections for ever. Kysely refuses what the work sends through tx afterwards.
          void session.rollback();
        },
      };
      return session;
    },
  };
}
