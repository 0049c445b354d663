/**
 * Work that ends the ledger's transaction itself (a ROLLBACK on tx, say after finding nothing to
 * do) takes the claim with it; the ledger's COMMIT then commits nothing. It must not answer
 * processed (200 to the gateway, nothing recorded). mysql2, Kysely and Drizzle answer failed by
 * their done check, node-postgres by COMMIT's notice, postgres.js by a check sent with COMMIT.
 * Real PostgreSQL 15, through node-postgres, postgres.js and the public runOnce.
 */
import type pg from 'pg';
import postgres from 'postgres';
import { expect, it } from 'vitest';
import { SqlLedger, fromPg, fromPostgresJs } from '../../../../src/sql/index.js';
import { runOnce, WebhookHandlerError } from '../../../../src/webhooks/index.js';
import { postgresForFile } from '../../../helpers/database-for-file.js';

const db = postgresForFile(4);

it('work that rolled tx back is not acknowledged as processed, and the retry runs it', async () => {
  const ledger = new SqlLedger(fromPg(db.pool), { table: 'ledger_work_ends_tx' });
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
  const sql = postgres(db.server.url, { max: 4, onnotice: () => undefined });
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
    expect((await runOnce(ledger, 'payment:PAY_3:SUCCESS', async ({ tx }) => void (await tx`SELECT 1`))).outcome).toBe(
      'processed',
    );
  } finally {
    await sql.end();
  }
}, 60_000);

/**
 * Work that ends the ledger's transaction and opens one of its own on tx (a ROLLBACK, then BEGIN
 * and its write) leaves a transaction open for the ledger's COMMIT to commit: its write, without
 * the claim. The run must not commit that write (the redelivery, finding the key free, writes the
 * order again): it is answered failed, and the callback is fulfilled once, by the redelivery.
 */
it.each(['node-postgres', 'postgres.js'] as const)(
  '%s: work that rolled tx back and began again is rolled back, and the order is written once',
  async (driver) => {
    const sql = postgres(db.server.url, { max: 2, onnotice: () => undefined });
    try {
      await db.pool.query('CREATE TABLE IF NOT EXISTS orders_begun_again (k text)');
      const write =
        driver === 'node-postgres'
          ? (tx: unknown, k: string) => (tx as pg.PoolClient).query('INSERT INTO orders_begun_again VALUES ($1)', [k])
          : (tx: unknown, k: string) => (tx as postgres.Sql).unsafe('INSERT INTO orders_begun_again VALUES ($1)', [k]);
      const begin =
        driver === 'node-postgres'
          ? (tx: unknown, text: string) => (tx as pg.PoolClient).query(text)
          : (tx: unknown, text: string) => (tx as postgres.Sql).unsafe(text);
      const ledger = new SqlLedger<unknown>(driver === 'node-postgres' ? fromPg(db.pool) : fromPostgresJs(sql), {
        table: `ledger_begun_again_${driver === 'node-postgres' ? 'pg' : 'js'}`,
      });
      await ledger.ensureSchema();
      const key = `payment:PAY_AGAIN_${driver}:SUCCESS`;
      const first = await runOnce(ledger, key, async ({ tx }) => {
        await begin(tx, 'ROLLBACK');
        await begin(tx, 'BEGIN');
        await write(tx, key);
      }).then(
        (result) => result.outcome,
        (error: unknown) => (error instanceof WebhookHandlerError ? error.stage : 'other'),
      );
      expect(first).toBe('handler');
      const retry = await runOnce(ledger, key, async ({ tx }) => void (await write(tx, key)));
      expect(retry.outcome).toBe('processed');
      const { rows } = await db.pool.query('SELECT count(*)::int AS n FROM orders_begun_again WHERE k = $1', [key]);
      expect(rows[0]).toEqual({ n: 1 });
    } finally {
      await sql.end();
    }
  },
  60_000,
);
