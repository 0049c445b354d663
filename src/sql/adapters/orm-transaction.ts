/**
 * What the ORM adapters share (Kysely in `from-kysely.ts`, Drizzle in `from-drizzle.ts`, Prisma in
 * `from-prisma.ts`): the dialects they drive, the lock wait bound set inside the ORM's transaction (and
 * on MySQL autocommit off for the run, restored before the ORM gives the connection back), and a
 * transaction an ORM opens with a callback, held open until the ledger decides.
 *
 * @module
 */
import { ISOLATION, restore, saveAndBound } from '../dialects/mysql/session.js';
import { boundLockWaits as boundPostgresLockWaits } from '../dialects/postgres/session.js';
import { settle, type SqlClient, type SqlResult, type SqlSession } from '../sql-client.js';
import type { OrmDialect } from './adapter-options.js';

/** Sends one of the ledger's statements through the ORM's transaction. */
export type RawQuery = (text: string, params: readonly unknown[]) => Promise<SqlResult>;

/**
 * The isolation level a run on `dialect` asks its ORM for: MySQL's claims need READ COMMITTED
 * (`dialects/mysql/session.ts`); on Postgres, the database's default (READ COMMITTED) is left as
 * it is. Every ORM adapter asks with this, each in its API's words.
 */
export const isolationFor = (dialect: OrmDialect): typeof ISOLATION | undefined =>
  dialect === 'mysql' ? ISOLATION : undefined;

/**
 * The transaction's lock wait bound: Postgres `SET LOCAL` (ends with the transaction). MySQL sets
 * the session's `innodb_lock_wait_timeout`, and turns autocommit off for the run: InnoDB rolls the
 * whole transaction back on a deadlock, and in autocommit a statement the work sent after it
 * (having caught the error) would commit on its own, outside the ledger. Answers how the run ends,
 * before the ORM gives the connection back: `end(true)` restores both (turning autocommit back on
 * commits, and rejects when that commit fails), `end(false)` rolls back first.
 */
export async function boundLockWaits(
  dialect: OrmDialect,
  query: RawQuery,
  lockTimeoutMs: number,
): Promise<((commit: boolean) => Promise<void>) | undefined> {
  if (dialect === 'postgres') {
    await query(boundPostgresLockWaits(lockTimeoutMs), []);
    return undefined;
  }
  await query(saveAndBound(lockTimeoutMs), []);
  const restored = () => query(restore(), []);
  return async (commit) => {
    if (commit) return void (await restored());
    await settle(query('ROLLBACK', []));
    await settle(restored());
  };
}

/** How a transaction an ORM opens with a callback hands the ledger its `tx` and raw queries ({@link heldTransaction}). */
type Connect<R, Tx> = (
  raw: R,
  ended: () => boolean,
) => { readonly tx: Tx; readonly query: RawQuery; readonly stop?: (() => void) | undefined };

/**
 * The client of an ORM whose transaction is a callback (Drizzle, Prisma): each run is one such
 * transaction, held open by {@link heldTransaction} until the ledger decides.
 */
export function heldTransactionClient<R, Tx>(
  dialect: OrmDialect,
  open: (body: (raw: R) => Promise<void>) => PromiseLike<unknown>,
  connect: Connect<R, Tx>,
): SqlClient<Tx> {
  return { dialect, begin: (lockTimeoutMs) => heldTransaction(dialect, lockTimeoutMs, open, connect) };
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
  connect: Connect<R, Tx>,
): Promise<SqlSession<Tx>> {
  return new Promise<SqlSession<Tx>>((handOut, failed) => {
    let decide!: (commit: boolean) => void;
    const decision = new Promise<boolean>((resolve) => (decide = resolve));
    let begun = false;
    // Once the ledger decided (a timed-out run: at once), tx refuses statements: the transaction is ending.
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
        ended = true;
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
        abandon() {
          // Rolled back now, not once the work settles: a handler stuck on a lock this transaction
          // holds (a write through the app's own client instead of tx) would otherwise hold both
          // connections for ever. tx refuses what the work sends afterwards.
          void rollback();
        },
      };
    };
  });
}
