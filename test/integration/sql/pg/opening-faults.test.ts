/**
 * A node-postgres run's opening pipeline (BEGIN, its bounds and the claim under one Sync) meeting
 * what a production database does to a statement: a cancel or a terminated session while the claim
 * waits on a lock, the run's own time running out there, node-postgres's `query_timeout`, and
 * `prepare: false` behind a pooler. Each ends the run unanswered or in flight, commits nothing of
 * it, and leaves the pool able to claim: the callback is then processed once. Real PostgreSQL 15,
 * through the public SqlLedger.run.
 */
import pg from 'pg';
import { expect, it } from 'vitest';
import { fromPg } from '../../../../src/sql/index.js';
import { postgresForFile } from '../../../helpers/database-for-file.js';
import { newLedger } from '../scenarios.js';
import { deliver, hold, holderAndWaiter, ORDERS_TABLE, ordersOf } from './paid-orders.js';

const db = postgresForFile(2, (admin) => admin.query(ORDERS_TABLE));
const orders = (payment: string) => ordersOf(db.pool, payment);

/** The server process of the session waiting on a lock, once one is (within 10 s). */
async function waitingOnLock(): Promise<number> {
  for (const deadline = Date.now() + 10_000; Date.now() < deadline;) {
    const { rows } = await db.pool.query<{ pid: number }>(
      "SELECT pid FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND datname = current_database()",
    );
    const [waiting] = rows;
    if (waiting !== undefined) return waiting.pid;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  throw new Error('no session waited on a lock within 10 s');
}

it('a claim cancelled (pg_cancel_backend) while it waits on a lock: not processed, nothing of it committed, the connection claims on', async () => {
  await holderAndWaiter(db.server.url, { lockTimeoutMs: 20_000 }, async ({ first, second }) => {
    const { release, held } = await hold(first, 'PAY_CANCEL');
    const run = deliver(second, 'PAY_CANCEL');
    await db.pool.query('SELECT pg_cancel_backend($1)', [await waitingOnLock()]);
    expect(await run).toBe('unavailable');
    release();
    expect((await held).outcome).toBe('processed');
    expect(await deliver(second, 'PAY_CANCEL')).toBe('duplicate');
    expect(await deliver(second, 'PAY_CANCEL_N')).toBe('processed');
    expect([await orders('PAY_CANCEL'), await orders('PAY_CANCEL_N')]).toEqual([1, 1]);
  });
});

it('a claim whose session is terminated while it waits on a lock: unavailable, and the pool claims on a new connection', async () => {
  await holderAndWaiter(db.server.url, { lockTimeoutMs: 20_000 }, async ({ first, second }) => {
    const { release, held } = await hold(first, 'PAY_KILLED');
    const run = deliver(second, 'PAY_KILLED');
    await db.pool.query('SELECT pg_terminate_backend($1)', [await waitingOnLock()]);
    expect(await run).toBe('unavailable');
    release();
    expect((await held).outcome).toBe('processed');
    expect(await deliver(second, 'PAY_KILLED')).toBe('duplicate');
    expect(await orders('PAY_KILLED')).toBe(1);
  });
});

it("the run's time running out while its claim waits on a lock: unavailable within it, and the claim never commits", async () => {
  await holderAndWaiter(db.server.url, { lockTimeoutMs: 20_000 }, async ({ first, second }) => {
    const { release, held } = await hold(first, 'PAY_BUDGET');
    const started = Date.now();
    const outcome = await deliver(second, 'PAY_BUDGET', 300);
    expect([outcome, Date.now() - started < 5_000]).toEqual(['unavailable', true]);
    release();
    expect((await held).outcome).toBe('processed');
    expect(await deliver(second, 'PAY_BUDGET')).toBe('duplicate');
    expect(await deliver(second, 'PAY_BUDGET_N')).toBe('processed');
    expect([await orders('PAY_BUDGET'), await orders('PAY_BUDGET_N')]).toEqual([1, 1]);
  });
});

it("node-postgres's query_timeout shorter than the claim's lock wait: not processed, no hang, the callback processed once later", async () => {
  await holderAndWaiter(db.server.url, { lockTimeoutMs: 5_000, queryTimeoutMs: 300 }, async ({ first, second }) => {
    const { release, held } = await hold(first, 'PAY_QT');
    expect(await deliver(second, 'PAY_QT')).toBe('unavailable');
    release();
    expect((await held).outcome).toBe('processed');
    expect(await deliver(second, 'PAY_QT')).toBe('duplicate');
    expect(await deliver(second, 'PAY_QT_N')).toBe('processed');
    expect([await orders('PAY_QT'), await orders('PAY_QT_N')]).toEqual([1, 1]);
  });
});

it("with node-postgres's query_timeout set, a processed run leaves no timer behind (the pipeline answers node-postgres's callback)", async () => {
  const pool = new pg.Pool({ connectionString: db.server.url, max: 1, query_timeout: 60_000 });
  try {
    const ledger = await newLedger(fromPg(pool));
    const timers = () => process.getActiveResourcesInfo().filter((resource) => resource === 'Timeout').length;
    const before = timers();
    for (let i = 0; i < 50; i++) {
      const payment = `PAY_TIMER_${i}`;
      expect(await deliver(ledger, payment)).toBe('processed');
    }
    // A few timers of the pool's own may come and go; one per run would be 50.
    expect(timers() - before).toBeLessThan(5);
  } finally {
    await pool.end();
  }
});

it('with prepare: false (a pooler in transaction mode): processed, duplicate, in flight behind a held row, then processed once', async () => {
  await holderAndWaiter(db.server.url, { lockTimeoutMs: 200, prepare: false }, async ({ first, second }) => {
    expect(await deliver(second, 'PAY_UNNAMED')).toBe('processed');
    expect(await deliver(second, 'PAY_UNNAMED')).toBe('duplicate');
    const { release, held } = await hold(first, 'PAY_UNNAMED_HELD');
    expect(await deliver(second, 'PAY_UNNAMED_HELD')).toBe('in_flight');
    release();
    expect((await held).outcome).toBe('processed');
    expect(await deliver(second, 'PAY_UNNAMED_HELD')).toBe('duplicate');
    expect([await orders('PAY_UNNAMED'), await orders('PAY_UNNAMED_HELD')]).toEqual([1, 1]);
  });
});
