/**
 * Every examples/ledger-*.ts runs here against a real database, the way a merchant wires it: a
 * signed callback marks the order paid (200), its duplicate does not run again, and (node-postgres)
 * the reconciliation of the same status is a duplicate.
 */
import { drizzle } from 'drizzle-orm/node-postgres';
import { Kysely, PostgresDialect } from 'kysely';
import mysql from 'mysql2/promise';
import pg from 'pg';
import postgres from 'postgres';
import { afterAll, beforeAll, expect, it } from 'vitest';
import * as drizzleExample from '../../../examples/ledger-drizzle.js';
import * as kyselyExample from '../../../examples/ledger-kysely.js';
import * as mysqlExample from '../../../examples/ledger-mysql2.js';
import * as pgExample from '../../../examples/ledger-pg.js';
import * as postgresJsExample from '../../../examples/ledger-postgres-js.js';
import type { WebhookHandler } from '../../../src/webhooks/index.js';
import { signCallback } from '../../../src/webhooks/index.js';
import { MariadbServer } from '../../helpers/mariadb.js';
import { PostgresServer } from '../../helpers/postgres.js';

const API_KEY = 'sk_test_ledger_examples_01';
let postgresServer: PostgresServer;
let mariadb: MariadbServer;
let pool: pg.Pool;
let mysqlPool: mysql.Pool;
let n = 0;

beforeAll(async () => {
  [postgresServer, mariadb] = await Promise.all([PostgresServer.start(), MariadbServer.start()]);
  pool = new pg.Pool({ connectionString: postgresServer.url });
  await pool.query('CREATE TABLE orders (reference_id TEXT PRIMARY KEY, status TEXT)');
  mysqlPool = mysql.createPool({ ...mariadb.options });
  await mysqlPool.query('CREATE TABLE orders (reference_id VARCHAR(100) PRIMARY KEY, status VARCHAR(20))');
}, 60_000);
afterAll(async () => {
  await pool?.end();
  await mysqlPool?.end();
  await postgresServer?.destroy();
  await mariadb?.destroy();
});

/** A new unpaid order, its callback delivered twice: answers, and the order's status after. */
async function paidTwice(
  handler: WebhookHandler,
  newOrder: (referenceId: string) => Promise<unknown>,
  status: (referenceId: string) => Promise<unknown>,
) {
  const referenceId = `ORDER_EXAMPLE_${++n}`;
  await newOrder(referenceId);
  const { rawBody, headers } = await signCallback(API_KEY, {
    payment_id: `PAY_EXAMPLE_${n}`,
    reference_id: referenceId,
    amount: 25,
    status: 'SUCCESS',
  });
  const first = await handler.handle({ body: rawBody, headers });
  const second = await handler.handle({ body: rawBody, headers });
  return {
    referenceId,
    outcomes: [first.status, first.body.outcome, second.status, second.body.outcome],
    status: await status(referenceId),
  };
}

const pgOrder = (referenceId: string) => pool.query("INSERT INTO orders VALUES ($1, 'unpaid')", [referenceId]);
const pgStatus = async (referenceId: string) =>
  (await pool.query('SELECT status FROM orders WHERE reference_id = $1', [referenceId])).rows[0]?.status;
const PAID_ONCE = [200, 'processed', 200, 'duplicate'];

it('examples/ledger-pg.ts: paid once, and the reconciliation of the same status is a duplicate', async () => {
  const { handler, reconcile } = await pgExample.createReceiver(pool, API_KEY);
  const { referenceId, outcomes, status } = await paidTwice(handler, pgOrder, pgStatus);
  expect(outcomes).toEqual(PAID_ONCE);
  expect(status).toBe('paid');
  expect(await reconcile({ payment_id: `PAY_EXAMPLE_${n}`, reference_id: referenceId, status: 'SUCCESS' })).toEqual({
    outcome: 'duplicate',
  });
});

it('examples/ledger-postgres-js.ts: paid once', async () => {
  const sql = postgres(postgresServer.url, { onnotice: () => undefined });
  try {
    const { handler } = await postgresJsExample.createReceiver(sql, API_KEY);
    const { outcomes, status } = await paidTwice(handler, pgOrder, pgStatus);
    expect([outcomes, status]).toEqual([PAID_ONCE, 'paid']);
  } finally {
    await sql.end({ timeout: 1 });
  }
});

it('examples/ledger-kysely.ts: paid once', async () => {
  const db = new Kysely<kyselyExample.ShopDatabase>({
    dialect: new PostgresDialect({ pool: new pg.Pool({ connectionString: postgresServer.url }) }),
  });
  try {
    const { handler } = await kyselyExample.createReceiver(db, API_KEY);
    const { outcomes, status } = await paidTwice(handler, pgOrder, pgStatus);
    expect([outcomes, status]).toEqual([PAID_ONCE, 'paid']);
  } finally {
    await db.destroy();
  }
});

it('examples/ledger-drizzle.ts: paid once', async () => {
  const { handler } = await drizzleExample.createReceiver(drizzle(pool), API_KEY);
  const { outcomes, status } = await paidTwice(handler, pgOrder, pgStatus);
  expect([outcomes, status]).toEqual([PAID_ONCE, 'paid']);
});

it('examples/ledger-mysql2.ts: paid once (MariaDB)', async () => {
  const { handler } = await mysqlExample.createReceiver(mysqlPool, API_KEY);
  const { outcomes, status } = await paidTwice(
    handler,
    (referenceId) => mysqlPool.query("INSERT INTO orders VALUES (?, 'unpaid')", [referenceId]),
    async (referenceId) =>
      (
        await mysqlPool.query<mysql.RowDataPacket[]>('SELECT status FROM orders WHERE reference_id = ?', [referenceId])
      )[0][0]?.status,
  );
  expect([outcomes, status]).toEqual([PAID_ONCE, 'paid']);
});
