/**
 * The ledger on a real PostgreSQL 15, through node-postgres and postgres.js (every scenario of
 * sql/scenarios.ts), Kysely and Drizzle (the first two).
 */
import { drizzle } from 'drizzle-orm/node-postgres';
import { pgTable, text } from 'drizzle-orm/pg-core';
import { Kysely, PostgresDialect } from 'kysely';
import pg from 'pg';
import postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fromDrizzle, fromKysely, fromPg, fromPostgresJs, type SqlLedger } from '../../../../src/sql/index.js';
import { PostgresServer } from '../../../helpers/postgres.js';
import { ledgerScenarios, newLedger, HANDLED_FOR_GOOD } from '../scenarios.js';

let server: PostgresServer;
let pool: pg.Pool;
let sql: postgres.Sql;
let reader: pg.Pool;

beforeAll(async () => {
  server = await PostgresServer.start();
  pool = new pg.Pool({ connectionString: server.url, max: 20 });
  pool.on('error', () => undefined); // idle clients die with the server in the outage scenario
  reader = new pg.Pool({ connectionString: server.url, max: 2 });
  reader.on('error', () => undefined);
  // connect_timeout: postgres.js 3.4.9 sends nothing on a connection that died with a write still
  // queued (the outage scenario) until its next connect times out, by default after 30 s, the
  // scenario's whole time; a few seconds show the outage as well.
  sql = postgres(server.url, { max: 20, onnotice: () => undefined, connect_timeout: 3 });
  await reader.query('CREATE TABLE fulfilments (payment_id TEXT NOT NULL)');
});
afterAll(async () => {
  await pool?.end();
  await reader?.end();
  await sql?.end({ timeout: 1 });
  await server?.destroy();
});

const fulfilments = async (payment: string) =>
  Number((await reader.query('SELECT count(*) AS n FROM fulfilments WHERE payment_id = $1', [payment])).rows[0].n);
const outage = { stop: () => server.stop(), start: () => server.start() };

ledgerScenarios(
  'node-postgres',
  () => ({
    client: fromPg(pool),
    fulfil: async (tx, payment) => void (await tx.query('INSERT INTO fulfilments (payment_id) VALUES ($1)', [payment])),
    fulfilments,
    outage,
    closesOnTimeout: true,
  }),
  { outage: true },
);

ledgerScenarios(
  'postgres.js',
  () => ({
    client: fromPostgresJs(sql),
    fulfil: async (tx, payment) => void (await tx`INSERT INTO fulfilments (payment_id) VALUES (${payment})`),
    fulfilments,
    outage,
    closesOnTimeout: true,
  }),
  { outage: true },
);

describe('a handler that swallows a failed statement (Postgres then aborts the transaction)', () => {
  const swallowed = async <Tx>(ledger: SqlLedger<Tx>, payment: string, work: (tx: Tx) => Promise<void>) => {
    const run = await ledger.run(`payment:${payment}:SUCCESS`, work, { raiseMark: false, completedTtlMs: 60_000 });
    expect(run).toMatchObject({ outcome: 'failed', error: { code: '25P02' } });
    expect(await fulfilments(payment)).toBe(0);
    expect(
      (await ledger.run(`payment:${payment}:SUCCESS`, () => 'again', { raiseMark: false, completedTtlMs: 60_000 }))
        .outcome,
    ).toBe('processed');
  };

  it('node-postgres: failed, not processed; its writes and the claim rolled back; the retry runs', async () => {
    await swallowed(await newLedger(fromPg(pool)), 'PAY_SWALLOW_PG', async (tx) => {
      await tx.query('INSERT INTO fulfilments (payment_id) VALUES ($1)', ['PAY_SWALLOW_PG']);
      await tx.query('SELECT * FROM no_such_table').catch(() => undefined);
    });
  });

  it('postgres.js: failed, not processed; its writes and the claim rolled back; the retry runs', async () => {
    await swallowed(await newLedger(fromPostgresJs(sql)), 'PAY_SWALLOW_JS', async (tx) => {
      await tx`INSERT INTO fulfilments (payment_id) VALUES (${'PAY_SWALLOW_JS'})`;
      await tx`SELECT * FROM no_such_table`.catch(() => undefined);
    });
  });
});

const FIRST_TWO = [
  'a callback is processed once; its duplicate finds the record and does not run',
  'a handler that throws is rolled back with its writes, and the retry fulfils once',
  HANDLED_FOR_GOOD,
];
interface FulfilmentsTable {
  fulfilments: { payment_id: string };
}

ledgerScenarios(
  'Kysely (PostgresDialect)',
  () => ({
    client: fromKysely(new Kysely<FulfilmentsTable>({ dialect: new PostgresDialect({ pool }) })),
    fulfil: async (tx, payment) => void (await tx.insertInto('fulfilments').values({ payment_id: payment }).execute()),
    fulfilments,
    closesOnTimeout: true,
  }),
  { only: FIRST_TWO },
);

const fulfilmentsTable = pgTable('fulfilments', { payment_id: text('payment_id').notNull() });
ledgerScenarios(
  'Drizzle (node-postgres)',
  () => ({
    client: fromDrizzle(drizzle(pool)),
    fulfil: async (tx, payment) => void (await tx.insert(fulfilmentsTable).values({ payment_id: payment })),
    fulfilments,
    closesOnTimeout: true,
  }),
  { only: FIRST_TWO },
);
