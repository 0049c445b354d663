/**
 * Drizzle over ONE connection (drizzle(new pg.Client(…)), as Drizzle's own docs show) runs every
 * db.transaction on that connection: concurrent callbacks share one transaction, so one's COMMIT
 * commits another's claim and partial writes, and that one's failure then leaves a committed
 * claim behind (its retry is a duplicate: the callback is lost). The ledger needs a pool.
 * Real PostgreSQL 15, through the public fromDrizzle, SqlLedger and runOnce.
 */
import { randomUUID } from 'node:crypto';
import { drizzle } from 'drizzle-orm/node-postgres';
import pg from 'pg';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { ConfigurationError } from '../../../../src/core/errors/base.js';
import { SqlLedger, fromDrizzle } from '../../../../src/sql/index.js';
import { runOnce } from '../../../../src/webhooks/index.js';
import { PostgresServer } from '../../../helpers/postgres.js';

let server: PostgresServer;
let client: pg.Client;
let pool: pg.Pool;

beforeAll(async () => {
  server = await PostgresServer.start();
  client = new pg.Client({ connectionString: server.url });
  client.on('notice', () => undefined);
  await client.connect();
  pool = new pg.Pool({ connectionString: server.url, max: 4 });
});
afterAll(async () => {
  await client?.end();
  await pool?.end();
  await server?.destroy();
});

it('a Drizzle database over one connection is refused before any callback shares its transaction with another', async () => {
  const make = () =>
    new SqlLedger(fromDrizzle(drizzle(client)), { table: `ledger_${randomUUID().replaceAll('-', '').slice(0, 12)}` });
  let ledger: SqlLedger<unknown>;
  try {
    ledger = make();
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigurationError);
    expect((error as Error).message).toMatch(/pool/);
    // Over a pool each run has its own connection: accepted.
    expect(() => fromDrizzle(drizzle(pool))).not.toThrow();
    return;
  }
  // Accepted (before the fix): a failed callback B whose claim another callback's COMMIT took along.
  await ledger.ensureSchema();
  let open!: () => void;
  const opened = new Promise<void>((resolve) => (open = resolve));
  let started!: () => void;
  const running = new Promise<void>((resolve) => (started = resolve));
  const b = runOnce(ledger, 'payment:PAY_B:SUCCESS', async () => {
    started();
    await opened;
    throw new Error('the shipping service is down');
  }).catch((error: unknown) => error);
  await running;
  expect((await runOnce(ledger, 'payment:PAY_A:SUCCESS', () => 'a')).outcome).toBe('processed');
  open();
  await b;
  let retried = false;
  const retry = await runOnce(ledger, 'payment:PAY_B:SUCCESS', () => void (retried = true));
  expect(retry.outcome).toBe('processed');
  expect(retried).toBe(true);
}, 60_000);
