/**
 * node-postgres's `tx` is a pooled client: a handler that keeps it and writes after its run ended
 * (a fire-and-forget promise, a write after it threw) reached the client back in the pool, where
 * the write ran on its own, or in another callback's transaction, and the retry fulfilled the
 * callback a second time; a handler's `tx.release()` (node-postgres's habit) handed the run's
 * client to another run mid-transaction. Drizzle's transaction holds the same client. Real
 * PostgreSQL 15, through the public SqlLedger.run.
 */
import { sql } from 'drizzle-orm';
import { drizzle } from 'drizzle-orm/node-postgres';
import pg from 'pg';
import { expect, it } from 'vitest';
import { fromDrizzle, fromPg } from '../../../../src/sql/index.js';
import { postgresForFile } from '../../../helpers/database-for-file.js';
import { newLedger } from '../scenarios.js';

/** Its pool reads what the runs committed; each test's ledger has a pool of its own. */
const db = postgresForFile(2, (admin) => admin.query('CREATE TABLE orders (payment_id TEXT NOT NULL)'));

const OPTIONS = { raiseMark: false, completedTtlMs: 86_400_000 } as const;
const orders = async (payment: string) =>
  Number((await db.pool.query('SELECT count(*) AS n FROM orders WHERE payment_id = $1', [payment])).rows[0].n);

it('tx refuses a write the handler sends after it threw: the retry fulfils the payment once', async () => {
  const pool = new pg.Pool({ connectionString: db.server.url, max: 1 });
  try {
    const ledger = await newLedger(fromPg(pool));
    let kept: pg.PoolClient | undefined;
    const failed = await ledger.run(
      'payment:PAY_LATE:SUCCESS',
      (tx) => {
        kept = tx;
        throw new Error('handler bug, with a write still to come');
      },
      OPTIONS,
    );
    expect(failed.outcome).toBe('failed');
    await expect(kept?.query('INSERT INTO orders (payment_id) VALUES ($1)', ['PAY_LATE'])).rejects.toThrow(
      /after its run had ended/,
    );

    const retried = await ledger.run(
      'payment:PAY_LATE:SUCCESS',
      async (tx) => void (await tx.query('INSERT INTO orders (payment_id) VALUES ($1)', ['PAY_LATE'])),
      OPTIONS,
    );
    expect(retried.outcome).toBe('processed');
    expect(await orders('PAY_LATE')).toBe(1);
  } finally {
    await pool.end();
  }
});

it("Drizzle's tx refuses a write the handler sends after it threw: the retry fulfils the payment once", async () => {
  const pool = new pg.Pool({ connectionString: db.server.url, max: 1 });
  try {
    const ledger = await newLedger(fromDrizzle(drizzle(pool)));
    const write = (tx: { execute(query: ReturnType<typeof sql>): Promise<unknown> }) =>
      tx.execute(sql`INSERT INTO orders (payment_id) VALUES (${'PAY_LATE_DZ'})`);
    let kept: Parameters<Parameters<typeof ledger.run>[1]>[0] | undefined;
    const failed = await ledger.run(
      'payment:PAY_LATE_DZ:SUCCESS',
      (tx) => {
        kept = tx;
        throw new Error('handler bug, with a write still to come');
      },
      OPTIONS,
    );
    expect(failed.outcome).toBe('failed');
    // Drizzle wraps the driver's error ("Failed query: …") with it as the cause.
    await expect(kept && write(kept)).rejects.toMatchObject({
      cause: { message: expect.stringMatching(/after its run had ended/) },
    });

    const retried = await ledger.run('payment:PAY_LATE_DZ:SUCCESS', async (tx) => void (await write(tx)), OPTIONS);
    expect(retried.outcome).toBe('processed');
    expect(await orders('PAY_LATE_DZ')).toBe(1);
  } finally {
    await pool.end();
  }
});

it('keeps its client when the handler calls tx.release(): the pool does not hand it to another caller mid-run', async () => {
  const pool = new pg.Pool({ connectionString: db.server.url, max: 1 });
  try {
    const ledger = await newLedger(fromPg(pool));
    let waiting: Promise<pg.PoolClient> | undefined;
    const run = await ledger.run(
      'payment:PAY_REL:SUCCESS',
      async (tx) => {
        await tx.query('INSERT INTO orders (payment_id) VALUES ($1)', ['PAY_REL']);
        tx.release();
        waiting = pool.connect();
        // An idle client is handed out without a round trip; a statement takes one.
        return Promise.race([waiting.then(() => 'handed out'), tx.query('SELECT 1').then(() => "still the run's")]);
      },
      OPTIONS,
    );
    expect(run).toEqual({ outcome: 'processed', value: "still the run's" });
    (await waiting)?.release();
    expect(await orders('PAY_REL')).toBe(1);
  } finally {
    await pool.end();
  }
});
