/**
 * A write of the handler that breaks a DEFERRABLE INITIALLY DEFERRED constraint fails at the
 * ledger's COMMIT: Postgres answers the COMMIT with the violation and rolls everything back. That
 * outcome is known (nothing committed, the handler's write refused), so the delivery is the
 * handler's failure (500, stage 'handler'), not a database whose COMMIT outcome is unknown (503,
 * stage 'store', STORE_UNAVAILABLE), which would send the merchant looking for an outage.
 * Its connection goes back to the pool. Real PostgreSQL 15, through node-postgres, postgres.js,
 * Kysely and Drizzle and the public runOnce (Prisma: sql/prisma/scenarios.test.ts; SQLite's deferred
 * foreign key: sql/sqlite/deferred-constraint.test.ts).
 */
import { sql as drizzleSql } from 'drizzle-orm';
import { drizzle } from 'drizzle-orm/node-postgres';
import { Kysely, PostgresDialect, sql as kyselySql } from 'kysely';
import type pg from 'pg';
import postgres from 'postgres';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { SqlLedger, fromDrizzle, fromKysely, fromPg, fromPostgresJs, type SqlClient } from '../../../src/sql/index.js';
import { runOnce, WebhookHandlerError } from '../../../src/webhooks/index.js';
import { postgresForFile } from '../../helpers/database-for-file.js';

const db = postgresForFile(4, async (pool) => {
  await pool.query('CREATE TABLE parcels (id int PRIMARY KEY)');
  await pool.query('CREATE TABLE shipments (k text, parcel int REFERENCES parcels (id) DEFERRABLE INITIALLY DEFERRED)');
});
let sql: postgres.Sql;
beforeAll(() => {
  sql = postgres(db.server.url, { max: 4, onnotice: () => undefined });
});
afterAll(() => sql?.end({ timeout: 1 }));

const insert = 'INSERT INTO shipments VALUES ($1, 42)';
const drivers: Record<
  string,
  { client: () => SqlClient<unknown>; ship: (tx: unknown, key: string) => Promise<unknown> }
> = {
  'node-postgres': { client: () => fromPg(db.pool), ship: (tx, key) => (tx as pg.PoolClient).query(insert, [key]) },
  // A statement that is not one plain read or write: COMMIT goes with its check (CHECK_THEN_COMMIT).
  'node-postgres, COMMIT with its check': {
    client: () => fromPg(db.pool),
    ship: async (tx, key) => {
      await (tx as pg.PoolClient).query('SET LOCAL work_mem = 65536');
      return (tx as pg.PoolClient).query(insert, [key]);
    },
  },
  'postgres.js': {
    client: () => fromPostgresJs(sql),
    ship: (tx, key) => (tx as postgres.ReservedSql)`INSERT INTO shipments VALUES (${key}, 42)`,
  },
  Kysely: {
    client: () => fromKysely(new Kysely<Record<string, never>>({ dialect: new PostgresDialect({ pool: db.pool }) })),
    ship: (tx, key) =>
      kyselySql`INSERT INTO shipments VALUES (${key}, 42)`.execute(tx as Kysely<Record<string, never>>),
  },
  Drizzle: {
    client: () => fromDrizzle(drizzle(db.pool)),
    ship: (tx, key) =>
      (tx as ReturnType<typeof drizzle>).execute(drizzleSql`INSERT INTO shipments VALUES (${key}, 42)`),
  },
};

it.each(Object.keys(drivers))(
  '%s: a deferred constraint broken at COMMIT is the handler failing, nothing committed',
  async (name) => {
    const driver = drivers[name]!;
    const ledger = new SqlLedger(driver.client(), {
      table: `ledger_deferred_${name.replace(/\W/g, '').toLowerCase()}`,
    });
    await ledger.ensureSchema();
    const key = `payment:PAY_DEFERRED_${name}:SUCCESS`;
    const failure = await runOnce(ledger, key, ({ tx }) => driver.ship(tx, key)).then(
      () => undefined,
      (error: unknown) => error,
    );
    expect(failure).toBeInstanceOf(WebhookHandlerError);
    expect(failure).toMatchObject({ stage: 'handler' });
    expect((await db.pool.query('SELECT count(*)::int AS n FROM shipments WHERE k = $1', [key])).rows[0]).toEqual({
      n: 0,
    });
    // The run's connection went back to the pool (a leaked one would starve the next callbacks).
    expect(db.pool.totalCount - db.pool.idleCount).toBe(0);
    // Nothing was recorded either: a retry runs the handler again.
    let ran = false;
    expect((await runOnce(ledger, key, () => void (ran = true))).outcome).toBe('processed');
    expect(ran).toBe(true);
  },
  60_000,
);
