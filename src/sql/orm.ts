/**
 * The ORM adapters: Kysely and Drizzle over their node-postgres and mysql2 drivers. The handler's
 * `tx` is the ORM's own transaction; the ledger's statements go through the same connection
 * (Kysely: raw compiled queries; Drizzle: its session's driver client), typed structurally so
 * neither ORM is imported.
 *
 * @module
 */
import { ConfigurationError } from '../core/errors/base.js';
import { settle, type SqlClient, type SqlDialect, type SqlResult, type SqlSession } from './driver.js';
import { guardedDrizzleTx } from './drizzle-tx.js';
import { listenForErrors } from './postgres.js';

type OrmDialect = Extract<SqlDialect, 'postgres' | 'mysql'>;
/** Sends one of the ledger's statements through the ORM's transaction. */
export type RawQuery = (text: string, params: readonly unknown[]) => Promise<SqlResult>;

const isRecord = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null;
const rowsOf = (value: unknown): readonly Record<string, unknown>[] => (Array.isArray(value) ? value.filter(isRecord) : []);

function checkDialect(dialect: unknown, from: string): OrmDialect {
  if (dialect === 'postgres' || dialect === 'mysql') return dialect;
  throw new ConfigurationError(`${from}: give the dialect as the second argument, 'postgres' or 'mysql' (the ledger supports their node-postgres and mysql2 drivers)`, 'dialect');
}

/**
 * The transaction's lock wait bound: Postgres `SET LOCAL` (ends with the transaction). MySQL sets
 * the session's `innodb_lock_wait_timeout`, and turns autocommit off for the run: InnoDB rolls the
 * whole transaction back on a deadlock, and in autocommit a statement the work sent after it
 * (having caught the error) would commit on its own, outside the ledger. Answers how the run ends,
 * before the ORM gives the connection back: `end(true)` restores both (turning autocommit back on
 * commits, and rejects when that commit fails), `end(false)` rolls back first.
 */
async function boundLockWaits(dialect: OrmDialect, query: RawQuery, lockTimeoutMs: number): Promise<((commit: boolean) => Promise<void>) | undefined> {
  if (dialect === 'postgres') {
    await query(`SET LOCAL lock_timeout = ${lockTimeoutMs}`, []);
    return undefined;
  }
  await query(
    `SET @myr_gateway_lwt = @@SESSION.innodb_lock_wait_timeout, @myr_gateway_ac = @@SESSION.autocommit, SESSION innodb_lock_wait_timeout = ${Math.ceil(lockTimeoutMs / 1000)}, SESSION autocommit = 0`,
    [],
  );
  const restore = () => query('SET SESSION innodb_lock_wait_timeout = @myr_gateway_lwt, SESSION autocommit = @myr_gateway_ac', []);
  return async (commit) => {
    if (commit) return void (await restore());
    await settle(query('ROLLBACK', []));
    await settle(restore());
  };
}

/** A Kysely transaction started with `db.startTransaction().execute()`, as the ledger drives it. */
export interface KyselyTransactionLike {
  /** Runs one compiled query on the transaction's connection. */
  executeQuery(query: {
    readonly sql: string;
    readonly parameters: readonly unknown[];
    readonly query: { readonly kind: 'RawNode'; readonly sqlFragments: readonly string[]; readonly parameters: readonly never[] };
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
  const executor: unknown = 'getExecutor' in db && typeof db.getExecutor === 'function' ? Reflect.apply(db.getExecutor, db, []) : undefined;
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
  if (!isRecord(db) && typeof db !== 'function') throw new ConfigurationError('fromKysely takes a Kysely instance (0.28 or later)', 'db');
  if (typeof db.startTransaction !== 'function') throw new ConfigurationError('fromKysely takes a Kysely instance (0.28 or later: it needs startTransaction)', 'db');
  const chosen = checkDialect(dialect ?? kyselyDialect(db), 'fromKysely could not tell the dialect of this Kysely instance');
  return {
    dialect: chosen,
    async begin(lockTimeoutMs) {
      const builder = db.startTransaction();
      const trx = (await (chosen === 'mysql' ? builder.setIsolationLevel('read committed') : builder).execute()) as KyselyTxOf<K> & KyselyTransactionLike;
      const query: RawQuery = async (text, parameters) => {
        const result = await trx.executeQuery({ sql: text, parameters, query: { kind: 'RawNode', sqlFragments: [text], parameters: [] }, queryId: { queryId: `myr-gateway-ledger-${++queries}` } });
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
        abandon(settled) {
          // Kysely cannot close one connection of its pool: roll back once the work settles; never commit.
          void settled.then(() => session.rollback());
        },
      };
      return session;
    },
  };
}

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
  if (!client || typeof send !== 'function') throw new ConfigurationError('fromDrizzle supports Drizzle over node-postgres (drizzle-orm/node-postgres) and mysql2 (drizzle-orm/mysql2)', 'db');
  return { client, send: (...args): unknown => Reflect.apply(send, client, args) };
}

function driverQuery(dialect: OrmDialect, send: (...args: unknown[]) => unknown): RawQuery {
  return async (text, params) => {
    const result: unknown = await send(text, [...params]);
    if (dialect === 'postgres') {
      return isRecord(result) ? { rows: rowsOf(result.rows), affected: typeof result.rowCount === 'number' ? result.rowCount : 0 } : { rows: [], affected: 0 };
    }
    const first: unknown = Array.isArray(result) ? result[0] : undefined;
    if (Array.isArray(first)) return { rows: rowsOf(first), affected: 0 };
    return { rows: [], affected: isRecord(first) && typeof first.affectedRows === 'number' ? first.affectedRows : 0 };
  };
}

class Rollback extends Error {}

/**
 * A transaction an ORM opens with a callback (Drizzle's `transaction`, Prisma's `$transaction`),
 * held open until the ledger decides: `open` starts it with the body, `connect` gives the
 * handler's `tx` and the ledger's raw queries for the ORM's transaction object. Lock waits are
 * bounded inside it; it commits when the body returns and rolls back when it throws.
 */
export function heldTransaction<R, Tx>(
  dialect: OrmDialect,
  lockTimeoutMs: number,
  open: (body: (raw: R) => Promise<void>) => PromiseLike<unknown>,
  connect: (raw: R, ended: () => boolean) => { readonly tx: Tx; readonly query: RawQuery; readonly stop?: (() => void) | undefined },
): Promise<SqlSession<Tx>> {
  return new Promise<SqlSession<Tx>>((handOut, failed) => {
    let decide!: (commit: boolean) => void;
    const decision = new Promise<boolean>((resolve) => (decide = resolve));
    let begun = false;
    let ended = false;
    /** Stops what the connection was given for the run (an error listener), once the transaction is over. */
    let stop: (() => void) | undefined;
    const finished = Promise.resolve(
      open(async (raw) => {
        const connected = connect(raw, () => ended);
        const { tx, query } = connected;
        stop = connected.stop;
        const end = await boundLockWaits(dialect, query, lockTimeoutMs);
        begun = true;
        handOut(session(tx, query));
        const commit = await decision;
        // Before the transaction ends: the ORM gives the connection back right after.
        await end?.(commit);
        if (!commit) throw new Rollback();
      }),
    );
    finished.then(
      () => (ended = true),
      (error: unknown) => {
        ended = true;
        if (!begun) failed(error);
      },
    );
    void settle(finished).then(() => stop?.());
    const session = (tx: Tx, query: RawQuery): SqlSession<Tx> => {
      const rollback = async () => {
        decide(false);
        await settle(finished);
      };
      return {
        tx,
        query,
        async commit() {
          decide(true);
          await finished;
        },
        rollback,
        abandon(settled) {
          void settled.then(rollback);
        },
      };
    };
  });
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
  if (!isRecord(db) || typeof db.transaction !== 'function') throw new ConfigurationError('fromDrizzle takes a Drizzle database (drizzle(pool) from drizzle-orm/node-postgres or drizzle-orm/mysql2)', 'db');
  // Over one connection Drizzle runs every transaction on it: concurrent runs would share one
  // (one's COMMIT taking another's claim along). Drizzle's own test of a pool, on its client.
  const base: unknown = '$client' in db ? db.$client : undefined;
  if (isRecord(base) && !('getConnection' in base) && !(base instanceof Object && base.constructor.name.includes('Pool'))) {
    throw new ConfigurationError('fromDrizzle needs Drizzle over a pool (drizzle(new pg.Pool(…)) or drizzle(mysql.createPool(…))): over one connection, concurrent callbacks would share one transaction', 'db');
  }
  const chosen = checkDialect(dialect ?? drizzleDialect(db), 'fromDrizzle could not tell the dialect of this Drizzle database');
  return {
    dialect: chosen,
    begin(lockTimeoutMs) {
      // Drizzle's transaction is a callback: it stays open until the ledger decides.
      return heldTransaction(
        chosen,
        lockTimeoutMs,
        (body) => db.transaction(body, chosen === 'mysql' ? { isolationLevel: 'read committed' } : undefined),
        (raw: unknown, ended) => {
          const { client, send } = driverClient(raw);
          // node-postgres's client emits 'error' when the server ends the session: unheard, the
          // process would end.
          const stop = chosen === 'postgres' ? listenForErrors(client) : undefined;
          // Drizzle calls back with the transaction whose type DrizzleTxOf<D> names.
          return { tx: guardedDrizzleTx(raw as DrizzleTxOf<D>, ended), query: driverQuery(chosen, send), stop };
        },
      );
    },
  };
}
