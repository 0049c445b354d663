/**
 * What the ORM adapters share (Kysely in `from-kysely.ts`, Drizzle in `from-drizzle.ts`, Prisma in
 * `from-prisma.ts`): the dialects they drive, the lock wait bound set inside the ORM's transaction (and
 * on MySQL autocommit off for the run, restored before the ORM gives the connection back), and a
 * transaction an ORM opens with a callback, held open until the ledger decides.
 *
 * @module
 */
import { ConfigurationError } from '../../core/errors/base.js';
import { settle, type SqlDialect, type SqlResult, type SqlSession } from '../sql-client.js';

/** The dialects an ORM adapter drives (their node-postgres and mysql2 drivers). */
export type OrmDialect = Extract<SqlDialect, 'postgres' | 'mysql'>;
/** Sends one of the ledger's statements through the ORM's transaction. */
export type RawQuery = (text: string, params: readonly unknown[]) => Promise<SqlResult>;

export const isRecord = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null;
/** The rows of a driver's answer that are rows (objects); anything else is dropped. */
export const rowsOf = (value: unknown): readonly Record<string, unknown>[] => (Array.isArray(value) ? value.filter(isRecord) : []);

/** The dialect given or read from the ORM's instance, or a ConfigurationError that asks for it (`from` says whose). */
export function checkDialect(dialect: unknown, from: string): OrmDialect {
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
export async function boundLockWaits(dialect: OrmDialect, query: RawQuery, lockTimeoutMs: number): Promise<((commit: boolean) => Promise<void>) | undefined> {
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
