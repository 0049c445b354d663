/**
 * `drizzle-kit push` against a real Postgres, on a shop whose callbacks run on the SQL ledger:
 * push makes the database match the merchant's Drizzle schema, so a ledger table missing from
 * that schema is dropped (every handled payment forgotten: a resend fulfils again). With
 * `pgLedgerTable()` exported from the schema (`myr-gateway/drizzle`), push keeps the table and its
 * rows, drops nothing, and a resend of a handled payment is still a duplicate.
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, resolve } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fromPg, SqlLedger } from '../../../../src/sql/index.js';
import { PostgresServer } from '../../../helpers/postgres.js';

const ROOT = resolve(import.meta.dirname, '../../../..');
const project = join(ROOT, '.tmp', `drizzle-kit-push-${process.pid}`);
let server: PostgresServer;

/** The merchant's own table, in every variant of their schema. */
const ORDERS =
  "export const orders = pgTable('orders', { reference_id: varchar('reference_id', { length: 64 }).primaryKey(), status: text('status').notNull() });";

beforeAll(async () => {
  server = await PostgresServer.start();
  mkdirSync(project, { recursive: true });
}, 60_000);
afterAll(async () => {
  await server?.stop();
  rmSync(project, { recursive: true, force: true });
});

/** A database of its own, with the merchant's table, and a pool on it. */
async function shopDatabase(name: string): Promise<pg.Pool> {
  const admin = new pg.Client({ connectionString: server.url });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${name}`);
  await admin.end();
  const pool = new pg.Pool({ connectionString: server.url.replace(/\/postgres$/, `/${name}`), max: 4 });
  pool.on('error', () => undefined); // push's DROP may end an idle client's session
  await pool.query('CREATE TABLE orders (reference_id VARCHAR(64) PRIMARY KEY, status TEXT NOT NULL)');
  return pool;
}

/** Runs `drizzle-kit push --force` (as a CI deploy step does: no prompt) on `schema`; answers what it printed. */
function push(database: string, schema: string): string {
  const dir = join(project, database);
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'schema.ts'), schema);
  const url = server.url.replace(/\/postgres$/, `/${database}`);
  writeFileSync(
    join(dir, 'drizzle.config.ts'),
    `export default { dialect: 'postgresql', schema: ${JSON.stringify(join(dir, 'schema.ts'))}, dbCredentials: { url: ${JSON.stringify(url)} } };\n`,
  );
  // The CLI beside the package's entry (its exports name no bin).
  const bin = join(dirname(createRequire(join(dir, 'package.json')).resolve('drizzle-kit')), 'bin.cjs');
  return execFileSync(
    process.execPath,
    [bin, 'push', '--force', '--verbose', '--config', join(dir, 'drizzle.config.ts')],
    { cwd: dir, encoding: 'utf8', stdio: 'pipe' },
  );
}

/** A shop that handled `payments` SUCCESS callbacks through the ledger: their rows in the ledger's table. */
async function handled(pool: pg.Pool, payments: string[]): Promise<SqlLedger<pg.PoolClient>> {
  const ledger = new SqlLedger(fromPg(pool));
  await ledger.ensureSchema();
  for (const payment of payments) {
    const run = await ledger.run(
      `payment:${payment}:SUCCESS`,
      async (tx) => void (await tx.query("INSERT INTO orders VALUES ($1, 'paid')", [payment])),
      {
        raiseMark: false,
        completedTtlMs: 86_400_000,
        order: { paymentId: payment, rank: 1 },
      },
    );
    expect(run.outcome).toBe('processed');
  }
  return ledger;
}

const count = async (pool: pg.Pool, table: string) =>
  Number((await pool.query<{ n: string }>(`SELECT count(*) AS n FROM ${table}`)).rows[0]?.n);
const exists = async (pool: pg.Pool, table: string) =>
  (await pool.query('SELECT to_regclass($1) AS t', [table])).rows[0]?.t !== null;
const payments = ['PAY_PUSH_1', 'PAY_PUSH_2', 'PAY_PUSH_3'];

describe('drizzle-kit push on a shop using the SQL ledger (real Postgres)', () => {
  it('before: without the ledger in the schema, push drops its table and every handled payment with it', async () => {
    const pool = await shopDatabase('shop_without');
    await handled(pool, payments);
    const printed = push('shop_without', `import { pgTable, text, varchar } from 'drizzle-orm/pg-core';\n${ORDERS}\n`);
    expect(printed).toMatch(/DROP TABLE "myr_webhook_ledger"/);
    expect(await exists(pool, 'myr_webhook_ledger')).toBe(false);
    expect(await count(pool, 'orders')).toBe(3);
    await pool.end();
  }, 60_000);

  it('with pgLedgerTable() in the schema, push drops nothing: the rows survive and a resend is still a duplicate', async () => {
    const pool = await shopDatabase('shop_with');
    const ledger = await handled(pool, payments);
    const rows = await count(pool, 'myr_webhook_ledger');
    expect(rows).toBeGreaterThanOrEqual(payments.length);
    const schema = [
      `import { pgTable, text, varchar } from 'drizzle-orm/pg-core';`,
      `import { pgLedgerTable } from ${JSON.stringify(join(ROOT, 'src/drizzle/index.ts'))};`,
      ORDERS,
      'export const myrWebhookLedger = pgLedgerTable();',
      '',
    ].join('\n');
    const printed = push('shop_with', schema);
    expect(printed).not.toMatch(/DROP/);
    expect(await count(pool, 'myr_webhook_ledger')).toBe(rows);
    const resend = await ledger.run(
      'payment:PAY_PUSH_2:SUCCESS',
      async (tx) => void (await tx.query("INSERT INTO orders VALUES ('AGAIN', 'paid')")),
      {
        raiseMark: false,
        completedTtlMs: 86_400_000,
        order: { paymentId: 'PAY_PUSH_2', rank: 1 },
      },
    );
    expect(resend.outcome).toBe('duplicate');
    // A second push finds nothing left to change.
    expect(push('shop_with', schema)).toMatch(/No changes detected/);
    await pool.end();
  }, 60_000);
});
