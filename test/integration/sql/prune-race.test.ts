/**
 * prune() running while a delivery takes over an expired record: the record that delivery
 * commits is live, and prune must not delete it (a later duplicate would then run again).
 * Real PostgreSQL 15, through node-postgres, the public runOnce and SqlLedger.prune.
 */
import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { SqlLedger, fromPg } from '../../../src/sql/index.js';
import { runOnce } from '../../../src/webhooks/index.js';
import { PostgresServer } from '../../helpers/postgres.js';

let server: PostgresServer;
let pool: pg.Pool;

beforeAll(async () => {
  server = await PostgresServer.start();
  pool = new pg.Pool({ connectionString: server.url, max: 10 });
  pool.on('error', () => undefined);
});
afterAll(async () => {
  await pool?.end();
  await server?.destroy();
});

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Waits until some session waits on a row lock (prune blocked behind the running delivery). */
async function someoneWaitsOnALock(): Promise<void> {
  for (;;) {
    const { rows } = await pool.query("SELECT count(*)::int AS n FROM pg_stat_activity WHERE wait_event_type = 'Lock'");
    if (rows[0].n > 0) return;
    await sleep(10);
  }
}

it('prune during the takeover of an expired record leaves the new done record, so the next duplicate does not run', async () => {
  // Prune waits for the delivery's lock rather than giving up after the default 1 s.
  const ledger = new SqlLedger(fromPg(pool), {
    table: `ledger_${randomUUID().replaceAll('-', '').slice(0, 12)}`,
    lockTimeoutMs: 20_000,
  });
  await ledger.ensureSchema();
  // A delivery's key (`idempotency: 'webhook'`): a payment outcome's key is kept for good, never expires.
  const key = `webhook:WH_${randomUUID()}`;
  let runs = 0;
  // A record that has expired (a short completedTtlMs), as a day-old record has.
  expect((await runOnce(ledger, key, () => void runs++, { completedTtlMs: 1 })).outcome).toBe('processed');
  await sleep(5);

  let open!: () => void;
  const opened = new Promise<void>((resolve) => (open = resolve));
  let started!: () => void;
  const running = new Promise<void>((resolve) => (started = resolve));
  const takeover = runOnce(ledger, key, async () => {
    runs++;
    started();
    await opened;
  });
  // The takeover holds the row (its handler runs); prune meets it, waits, and goes on once it committed.
  await running;
  const pruning = ledger.prune();
  await someoneWaitsOnALock();
  open();
  expect((await takeover).outcome).toBe('processed');
  await pruning;

  const again = await runOnce(ledger, key, () => void runs++);
  expect(again.outcome).toBe('duplicate');
  expect(runs).toBe(2);
}, 60_000);
