/**
 * Drizzle over a node-postgres pool: the server ends the session of the ledger's transaction (an
 * admin's pg_terminate_backend, a failover, idle_in_transaction_session_timeout) while the
 * handler is busy elsewhere. node-postgres reports it as an 'error' event on the checked-out
 * client, which neither the pool (it stops listening at checkout) nor Drizzle listens for: an
 * uncaught exception that ends the merchant's process. The ledger listens while it holds the
 * transaction; the delivery is answered, nothing is committed, and the retry fulfils once.
 * Real PostgreSQL 15, through the public fromDrizzle, SqlLedger and runOnce.
 */
import { sql } from 'drizzle-orm';
import { drizzle } from 'drizzle-orm/node-postgres';
import pg from 'pg';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { SqlLedger, fromDrizzle } from '../../../../src/sql/index.js';
import { runOnce } from '../../../../src/webhooks/index.js';
import { PostgresServer } from '../../../helpers/postgres.js';

let server: PostgresServer;
let pool: pg.Pool;
let admin: pg.Pool;
const uncaught: unknown[] = [];
const record = (error: unknown) => void uncaught.push(error);

beforeAll(async () => {
  process.on('uncaughtException', record);
  server = await PostgresServer.start();
  admin = new pg.Pool({ connectionString: server.url, max: 2 });
  await admin.query('CREATE TABLE orders (k text)');
  pool = new pg.Pool({ connectionString: server.url, max: 2 });
  pool.on('error', () => undefined);
});
afterAll(async () => {
  process.off('uncaughtException', record);
  await pool?.end();
  await admin?.end();
  await server?.destroy();
});

it("the server ends the transaction's session under the handler's statement: no uncaught error, nothing committed, the retry fulfils once", async () => {
  const db = drizzle(pool);
  const ledger = new SqlLedger(fromDrizzle(db), { table: 'ledger_drizzle_dead' });
  await ledger.ensureSchema();
  const key = 'payment:PAY_DEAD:SUCCESS';
  let first = true;
  const run = await runOnce(ledger, key, async ({ tx }) => {
    await tx.execute(sql`INSERT INTO orders VALUES (${key})`);
    if (!first) return;
    first = false;
    // The session ends under the handler's statement, as an admin's terminate would end it.
    await tx.execute(sql`SELECT pg_terminate_backend(pg_backend_pid())`);
  }).then(
    (result) => result.outcome,
    () => 'rejected',
  );
  expect(run).not.toBe('processed');
  expect(uncaught).toEqual([]);
  let retry = await runOnce(
    ledger,
    key,
    async ({ tx }) => void (await tx.execute(sql`INSERT INTO orders VALUES (${key})`)),
  ).catch(() => undefined);
  // The pool may hand out its other connection, or a fresh one.
  for (let attempt = 0; attempt < 3 && retry?.outcome !== 'processed'; attempt++)
    retry = await runOnce(
      ledger,
      key,
      async ({ tx }) => void (await tx.execute(sql`INSERT INTO orders VALUES (${key})`)),
    ).catch(() => undefined);
  expect(retry?.outcome).toBe('processed');
  expect((await admin.query('SELECT count(*)::int AS n FROM orders WHERE k = $1', [key])).rows[0]).toEqual({ n: 1 });
  expect(uncaught).toEqual([]);
}, 60_000);
