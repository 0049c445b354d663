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
import { fromPg, type SqlLedger } from '../../../../src/sql/index.js';
import { lifecycleRank } from '../../../../src/webhooks/lifecycle.js';
import { postgresForFile } from '../../../helpers/database-for-file.js';
import { newLedger } from '../scenarios.js';

const db = postgresForFile(2, (admin) => admin.query('CREATE TABLE orders (payment_id TEXT NOT NULL)'));

/** A SUCCESS callback's run options, as the webhook handler gives them (`timeoutMs`: handlerTimeoutMs). */
const success = (payment: string, timeoutMs?: number) =>
  ({
    raiseMark: false,
    completedTtlMs: 86_400_000,
    order: { paymentId: payment, rank: lifecycleRank('SUCCESS') },
    timeoutMs,
  }) as const;

const orders = async (payment: string) =>
  Number((await db.pool.query('SELECT count(*) AS n FROM orders WHERE payment_id = $1', [payment])).rows[0].n);

const fulfil = (payment: string) => async (tx: pg.PoolClient) =>
  void (await tx.query('INSERT INTO orders (payment_id) VALUES ($1)', [payment]));

/** A run of `payment` whose handler wrote and then waits: it holds the payment's row until released. */
async function hold(ledger: SqlLedger<pg.PoolClient>, payment: string) {
  let release!: () => void;
  const gate = new Promise<void>((resolve) => (release = resolve));
  let started!: () => void;
  const running = new Promise<void>((resolve) => (started = resolve));
  const held = ledger.run(
    `payment:${payment}:SUCCESS`,
    async (tx) => {
      await fulfil(payment)(tx);
      started();
      await gate;
    },
    success(payment),
  );
  await running;
  return { release, held };
}

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

/** Two ledgers on one table: `first`'s pool holds a payment's row, `second`'s one connection waits on it. */
async function holderAndWaiter(
  waiterOptions: { readonly lockTimeoutMs: number; readonly prepare?: boolean; readonly queryTimeoutMs?: number },
  body: (ledgers: { first: SqlLedger<pg.PoolClient>; second: SqlLedger<pg.PoolClient> }) => Promise<void>,
) {
  const holding = new pg.Pool({ connectionString: db.server.url, max: 1 });
  const waiting = new pg.Pool({
    connectionString: db.server.url,
    max: 1,
    ...(waiterOptions.queryTimeoutMs === undefined ? {} : { query_timeout: waiterOptions.queryTimeoutMs }),
  });
  try {
    const first = await newLedger(fromPg(holding));
    const second = await newLedger(fromPg(waiting, { prepare: waiterOptions.prepare ?? true }), {
      table: first.table,
      lockTimeoutMs: waiterOptions.lockTimeoutMs,
    });
    await body({ first, second });
  } finally {
    await holding.end();
    await waiting.end();
  }
}

it('a claim cancelled (pg_cancel_backend) while it waits on a lock: not processed, nothing of it committed, the connection claims on', async () => {
  await holderAndWaiter({ lockTimeoutMs: 20_000 }, async ({ first, second }) => {
    const { release, held } = await hold(first, 'PAY_CANCEL');
    const run = second.run('payment:PAY_CANCEL:SUCCESS', fulfil('PAY_CANCEL'), success('PAY_CANCEL'));
    await db.pool.query('SELECT pg_cancel_backend($1)', [await waitingOnLock()]);
    expect((await run).outcome).toBe('unavailable');
    release();
    expect((await held).outcome).toBe('processed');
    expect((await second.run('payment:PAY_CANCEL:SUCCESS', fulfil('PAY_CANCEL'), success('PAY_CANCEL'))).outcome).toBe(
      'duplicate',
    );
    expect(
      (await second.run('payment:PAY_CANCEL_N:SUCCESS', fulfil('PAY_CANCEL_N'), success('PAY_CANCEL_N'))).outcome,
    ).toBe('processed');
    expect([await orders('PAY_CANCEL'), await orders('PAY_CANCEL_N')]).toEqual([1, 1]);
  });
});

it('a claim whose session is terminated while it waits on a lock: unavailable, and the pool claims on a new connection', async () => {
  await holderAndWaiter({ lockTimeoutMs: 20_000 }, async ({ first, second }) => {
    const { release, held } = await hold(first, 'PAY_KILLED');
    const run = second.run('payment:PAY_KILLED:SUCCESS', fulfil('PAY_KILLED'), success('PAY_KILLED'));
    await db.pool.query('SELECT pg_terminate_backend($1)', [await waitingOnLock()]);
    expect((await run).outcome).toBe('unavailable');
    release();
    expect((await held).outcome).toBe('processed');
    expect((await second.run('payment:PAY_KILLED:SUCCESS', fulfil('PAY_KILLED'), success('PAY_KILLED'))).outcome).toBe(
      'duplicate',
    );
    expect(await orders('PAY_KILLED')).toBe(1);
  });
});

it("the run's time running out while its claim waits on a lock: unavailable within it, and the claim never commits", async () => {
  await holderAndWaiter({ lockTimeoutMs: 20_000 }, async ({ first, second }) => {
    const { release, held } = await hold(first, 'PAY_BUDGET');
    const started = Date.now();
    const run = await second.run('payment:PAY_BUDGET:SUCCESS', fulfil('PAY_BUDGET'), success('PAY_BUDGET', 300));
    expect([run.outcome, Date.now() - started < 5_000]).toEqual(['unavailable', true]);
    release();
    expect((await held).outcome).toBe('processed');
    expect((await second.run('payment:PAY_BUDGET:SUCCESS', fulfil('PAY_BUDGET'), success('PAY_BUDGET'))).outcome).toBe(
      'duplicate',
    );
    expect(
      (await second.run('payment:PAY_BUDGET_N:SUCCESS', fulfil('PAY_BUDGET_N'), success('PAY_BUDGET_N'))).outcome,
    ).toBe('processed');
    expect([await orders('PAY_BUDGET'), await orders('PAY_BUDGET_N')]).toEqual([1, 1]);
  });
});

it("node-postgres's query_timeout shorter than the claim's lock wait: not processed, no hang, the callback processed once later", async () => {
  await holderAndWaiter({ lockTimeoutMs: 5_000, queryTimeoutMs: 300 }, async ({ first, second }) => {
    const { release, held } = await hold(first, 'PAY_QT');
    expect((await second.run('payment:PAY_QT:SUCCESS', fulfil('PAY_QT'), success('PAY_QT'))).outcome).toBe(
      'unavailable',
    );
    release();
    expect((await held).outcome).toBe('processed');
    expect((await second.run('payment:PAY_QT:SUCCESS', fulfil('PAY_QT'), success('PAY_QT'))).outcome).toBe('duplicate');
    expect((await second.run('payment:PAY_QT_N:SUCCESS', fulfil('PAY_QT_N'), success('PAY_QT_N'))).outcome).toBe(
      'processed',
    );
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
      expect((await ledger.run(`payment:${payment}:SUCCESS`, fulfil(payment), success(payment))).outcome).toBe(
        'processed',
      );
    }
    // A few timers of the pool's own may come and go; one per run would be 50.
    expect(timers() - before).toBeLessThan(5);
  } finally {
    await pool.end();
  }
});

it('with prepare: false (a pooler in transaction mode): processed, duplicate, in flight behind a held row, then processed once', async () => {
  await holderAndWaiter({ lockTimeoutMs: 200, prepare: false }, async ({ first, second }) => {
    expect(
      (await second.run('payment:PAY_UNNAMED:SUCCESS', fulfil('PAY_UNNAMED'), success('PAY_UNNAMED'))).outcome,
    ).toBe('processed');
    expect(
      (await second.run('payment:PAY_UNNAMED:SUCCESS', fulfil('PAY_UNNAMED'), success('PAY_UNNAMED'))).outcome,
    ).toBe('duplicate');
    const { release, held } = await hold(first, 'PAY_UNNAMED_HELD');
    const waited = await second.run(
      'payment:PAY_UNNAMED_HELD:SUCCESS',
      fulfil('PAY_UNNAMED_HELD'),
      success('PAY_UNNAMED_HELD'),
    );
    expect(waited.outcome).toBe('in_flight');
    release();
    expect((await held).outcome).toBe('processed');
    expect(
      (await second.run('payment:PAY_UNNAMED_HELD:SUCCESS', fulfil('PAY_UNNAMED_HELD'), success('PAY_UNNAMED_HELD')))
        .outcome,
    ).toBe('duplicate');
    expect([await orders('PAY_UNNAMED'), await orders('PAY_UNNAMED_HELD')]).toEqual([1, 1]);
  });
});
