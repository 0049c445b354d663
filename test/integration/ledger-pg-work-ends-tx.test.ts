/**
 * Work that ends the ledger's transaction itself (a ROLLBACK on tx, say after finding nothing to
 * do) takes the claim with it; the ledger's COMMIT then commits nothing. It must not answer
 * processed (200 to the gateway, nothing recorded). mysql2, Kysely and Drizzle answer failed by
 * their done check; postgres.js still answers processed (it has no per-connection notice).
 * Real PostgreSQL 15, through node-postgres and the public runOnce.
 */
import pg from 'pg';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { SqlLedger, fromPg } from '../../src/sql/index.js';
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
