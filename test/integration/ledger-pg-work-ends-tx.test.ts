/**
 * Work that ends the ledger's transaction itself (a ROLLBACK on tx, say after finding nothing to
 * do) takes the claim with it; the ledger's COMMIT then commits nothing. It must not answer
 * processed (200 to the gateway, nothing recorded). mysql2, Kysely and Drizzle answer failed by
 * their done check, node-postgres by COMMIT's notice, postgres.js by a check sent with COMMIT.
 * Real PostgreSQL 15, through node-postgres, postgres.js and the public runOnce.
 */
import pg from 'pg';
import postgres from 'postgres';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { SqlLedger, fromPg, fromPostgresJs } from '../../src/sql/index.js';
import { runOnce, WebhookHandlerError } from '../../src/webhooks/index.js';
import { PostgresServer } from '../helpers/postgres.js';

let server: PostgresServer;
let pool: pg.Pool;

beforeAll(async () => {
  server = await PostgresServer.start();
  pool = new pg.Pool({ connectionString: server.url, max: 4 });
});
afterAll(async () => {
  await pool?.end();
  await server?.destroy();
});

it('work that rolled tx back is not acknowledged as processed, and the retry runs it', async () => {
  const ledger = new SqlLedger(fromPg(pool), { table: 'ledger_work_ends_tx' });
  await ledger.ensureSchema();
  const outcome = await runOnce(ledger, 'payment:PAY_1:SUCCESS', async ({ tx }) => {
    await tx.query('ROLLBACK');
  }).then(
    (result) => result.outcome,
    (error: unknown) => (error instanceof WebhookHandlerError ? error.stage : 'other'),
  );
  expect(outcome).toBe('handler');
  let ran = false;
  const retry = await runOnce(ledger, 'payment:PAY_1:SUCCESS', () => void (ran = true));
  expect(retry.outcome).toBe('processed');
  expect(ran).toBe(true);
}, 60_000);

it('postgres.js: work that rolled tx back is not acknowledged as processed either, and the retry runs it', async () => {
  const sql = postgres(server.url, { max: 4, onnotice: () => undefined });
  try {
    const ledger = new SqlLedger(fromPostgresJs(sql), { table: 'ledger_work_ends_tx_js' });
    await ledger.ensureSchema();
    const outcome = await runOnce(ledger, 'payment:PAY_2:SUCCESS', async ({ tx }) => {
      await tx`ROLLBACK`;
    }).then(
      (result) => result.outcome,
      (error: unknown) => (error instanceof WebhookHandlerError ? error.stage : 'other'),
    );
    expect(outcome).toBe('handler');
    let ran = false;
    const retry = await runOnce(ledger, 'payment:PAY_2:SUCCESS', () => void (ran = true));
    expect(retry.outcome).toBe('processed');
    expect(ran).toBe(true);
    // A run that ends normally is still one COMMIT round trip, and processed.
    expect((await runOnce(ledger, 'payment:PAY_3:SUCCESS', async ({ tx }) => void (await tx`SELECT 1`))).outcome).toBe('processed');
  } finally {
    await sql.end();
  }
}, 60_000);
