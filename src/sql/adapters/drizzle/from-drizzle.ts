/**
 * The Drizzle adapter (drizzle-orm/node-postgres or drizzle-orm/mysql2, over a pool): each run is
 * one `db.transaction(…)` held open until the ledger decides, the handler's `tx` is that Drizzle
 * transaction (guarded by `drizzle-tx.ts`), and the ledger's statements go through its session's
 * driver client. Typed structurally: Drizzle is never imported.
 *
 * @module
 */
import { ConfigurationError } from '../../../core/errors/base.js';
import type { SqlClient } from '../../sql-client.js';
import { guardedDrizzleTx } from './drizzle-tx.js';
import { isRecord, ormDialect, rowsOf, type OrmDialect } from '../adapter-options.js';
import { heldTransactionClient, isolationFor, type RawQuery } from '../orm-transaction.js';
import { listenForErrors } from '../pg/from-pg.js';

/** A Drizzle database over node-postgres or mysql2 (`drizzle(pool)`). */
export interface DrizzleLike {
  /**
   * Runs `fn` in a transaction: COMMIT when it resolves, ROLLBACK when it throws. On MySQL the
   * ledger asks for READ COMMITTED, where the claim reads the payment's mark without a lock.
   */
  transaction(fn: (tx: unknown) => Promise<unknown>, config?: { isolationLevel: 'read committed' }): Promise<unknown>;
}

/** The transaction type of a Drizzle database. */
export type DrizzleTxOf<D> = D extends {
  /** Drizzle's `db.transaction(fn)`. */
  transaction(fn: (tx: infer T, ...rest: unknown[]) => Promise<never>, ...rest: never[]): Promise<unknown>;
}
  ? T
  : never;

const ENTITY_KIND: unique symbol = Symbol.for('drizzle:entityKind');

function drizzleDialect(db: object): unknown {
  const dialect = 'dialect' in db && isRecord(db.dialect) ? db.dialect : undefined;
  const kind: unknown = dialect && ENTITY_KIND in dialect.constructor ? dialect.constructor[ENTITY_KIND] : undefined;
  return kind === 'PgDialect' ? 'postgres' : kind === 'MySqlDialect' ? 'mysql' : undefined;
}

/** The driver client under a Drizzle transaction (node-postgres `PoolClient`, mysql2 `PoolConnection`). */
function driverClient(tx: unknown): { readonly client: object; readonly send: (...args: unknown[]) => unknown } {
  const session = isRecord(tx) && isRecord(tx.session) ? tx.session : undefined;
  const client = session && isRecord(session.client) ? session.client : undefined;
  const send = client?.query;
  if (!client || typeof send !== 'function')
    throw new ConfigurationError(
      'fromDrizzle supports Drizzle over node-postgres (drizzle-orm/node-postgres) and mysql2 (drizzle-orm/mysql2)',
      'db',
    );
  return { client, send: (...args): unknown => Reflect.apply(send, client, args) };
}

function driverQuery(dialect: OrmDialect, send: (...args: unknown[]) => unknown): RawQuery {
  return async (text, params) => {
    const result: unknown = await send(text, [...params]);
    if (dialect === 'postgres') {
      return isRecord(result)
        ? { rows: rowsOf(result.rows), affected: typeof result.rowCount === 'number' ? result.rowCount : 0 }
        : { rows: [], affected: 0 };
    }
    const first: unknown = Array.isArray(result) ? result[0] : undefined;
    if (Array.isArray(first)) return { rows: rowsOf(first), affected: 0 };
    return { rows: [], affected: isRecord(first) && typeof first.affectedRows === 'number' ? first.affectedRows : 0 };
  };
}

/**
 * The ledger over Drizzle (drizzle-orm/node-postgres or drizzle-orm/mysql2, over a pool): each run
 * is one `db.transaction(…)`, and the handler's `tx` is that Drizzle transaction (a Proxy of it,
 * whose queries are refused once the run ended, and which a log shows as `DrizzleTx {}`, never
 * the connection's password). The dialect is read from the instance; give it
 * as the second argument when that fails.
 *
 * @example
 * ```ts
 * const ledger = new SqlLedger(fromDrizzle(db));
 * // onEvent: async (event, { tx }) => { await tx.update(orders).set({ paid: true }).where(eq(orders.id, event.signed.reference_id)); }
 * ```
 */
export function fromDrizzle<D extends DrizzleLike>(db: D, dialect?: 'postgres' | 'mysql'): SqlClient<DrizzleTxOf<D>> {
  if (!isRecord(db) || typeof db.transaction !== 'function')
    throw new ConfigurationError(
      'fromDrizzle takes a Drizzle database (drizzle(pool) from drizzle-orm/node-postgres or drizzle-orm/mysql2)',
      'db',
    );
  // Over one connection Drizzle runs every transaction on it: concurrent runs would share one
  // (one's COMMIT taking another's claim along). Drizzle's own test of a pool, on its client.
  const base: unknown = '$client' in db ? db.$client : undefined;
  if (
    isRecord(base) &&
    !('getConnection' in base) &&
    !(base instanceof Object && base.constructor.name.includes('Pool'))
  ) {
    throw new ConfigurationError(
      'fromDrizzle needs Drizzle over a pool (drizzle(new pg.Pool(…)) or drizzle(mysql.createPool(…))): over one connection, concurrent callbacks would share one transaction',
      'db',
    );
  }
  const chosen = ormDialect(
    dialect,
    drizzleDialect(db),
    'fromDrizzle could not tell the dialect of this Drizzle database',
  );
  const isolation = isolationFor(chosen);
  // Drizzle's transaction is a callback: it stays open until the ledger decides.
  return heldTransactionClient(
    chosen,
    (body) => db.transaction(body, isolation && { isolationLevel: isolation }),
    (raw: unknown, ended) => {
      const { client, send } = driverClient(raw);
      // node-postgres's client emits 'error' when the server ends the session: unheard, the
      // process would end.
      const stop = chosen === 'postgres' ? listenForErrors(client) : undefined;
      // Drizzle calls back with the transaction whose type DrizzleTxOf<D> names.
      return { tx: guardedDrizzleTx(raw as DrizzleTxOf<D>, ended), query: driverQuery(chosen, send), stop };
    },
  );
}
