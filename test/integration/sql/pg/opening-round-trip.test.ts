/**
 * On node-postgres a run opens in one round trip: BEGIN, the run's lock bound and its claim leave
 * together, under one Sync, and the claim never runs without its BEGIN. node-postgres sends one
 * query at a time, so BEGIN and the claim were two round trips, and a callback cost three to the
 * floor's three. What the pipeline prepares on a connection must stay usable whatever happens
 * there: a pipeline that failed after its Parse, a DEALLOCATE ALL the handler sent through tx, a
 * pool in node-postgres's own pipeline mode. Real PostgreSQL 15, through the public SqlLedger.run.
 */
import pg from 'pg';
import { expect, it } from 'vitest';
import { fromPg } from '../../../../src/sql/index.js';
import { postgresForFile } from '../../../helpers/database-for-file.js';
import { recordingPgPool } from '../../../helpers/pg-queries.js';
import { newLedger } from '../scenarios.js';
import { deliver, fulfil, hold, holderAndWaiter, ORDERS_TABLE, ordersOf, success } from './paid-orders.js';

const db = postgresForFile(2, (admin) => admin.query(ORDERS_TABLE));
const orders = (payment: string) => ordersOf(db.pool, payment);

it('a callback is two round trips, BEGIN with its claim and COMMIT; its write commits with the claim, and its resend is a duplicate', async () => {
  const { pool, sent } = recordingPgPool({ connectionString: db.server.url, max: 1 });
  try {
    const ledger = await newLedger(fromPg(pool));
    sent.length = 0;
    expect(await deliver(ledger, 'PAY_RT')).toBe('processed');
    expect(sent).toEqual(['pipeline', 'INSERT INTO orders (payment_id) VALUES ($1)', 'COMMIT']);
    expect(await deliver(ledger, 'PAY_RT')).toBe('duplicate');
    const failed = await ledger.run(
      'payment:PAY_RT_FAILS:SUCCESS',
      async (tx) => {
        await fulfil('PAY_RT_FAILS')(tx);
        throw new Error('handler bug after its write');
      },
      success('PAY_RT_FAILS'),
    );
    expect(failed.outcome).toBe('failed');
    expect(await orders('PAY_RT_FAILS')).toBe(0);
    expect(await deliver(ledger, 'PAY_RT_FAILS')).toBe('processed');
    expect([await orders('PAY_RT'), await orders('PAY_RT_FAILS')]).toEqual([1, 1]);
  } finally {
    await pool.end();
  }
});

it('a claim that waited out lockTimeoutMs in its first pipeline on a connection leaves that connection able to claim again', async () => {
  await holderAndWaiter(db.server.url, { lockTimeoutMs: 300 }, async ({ first, second }) => {
    const { release, held } = await hold(first, 'PAY_HELD');
    // The waiting pool's only connection: its claim, prepared in this pipeline, waits on the held payment's row.
    expect(await deliver(second, 'PAY_HELD')).toBe('in_flight');
    release();
    expect((await held).outcome).toBe('processed');
    expect(await deliver(second, 'PAY_NEXT')).toBe('processed');
    expect(await deliver(second, 'PAY_HELD')).toBe('duplicate');
    expect([await orders('PAY_HELD'), await orders('PAY_NEXT')]).toEqual([1, 1]);
  });
});

it('a DEALLOCATE ALL the handler sends through tx costs no callback after it: the next is processed, a resend is a duplicate', async () => {
  const pool = new pg.Pool({ connectionString: db.server.url, max: 1 });
  try {
    const ledger = await newLedger(fromPg(pool));
    expect(await deliver(ledger, 'PAY_FIRST')).toBe('processed');
    // A resend reads the payment's row with a statement node-postgres prepares on the connection.
    expect(await deliver(ledger, 'PAY_FIRST')).toBe('duplicate');
    const deallocating = await ledger.run(
      'payment:PAY_DEALLOC:SUCCESS',
      async (tx) => {
        await fulfil('PAY_DEALLOC')(tx);
        await tx.query('DEALLOCATE ALL');
      },
      success('PAY_DEALLOC'),
    );
    expect(deallocating.outcome).toBe('processed');
    // The first run after it is a resend: its opening prepares again, and its read of the payment's row goes unnamed.
    expect(await deliver(ledger, 'PAY_FIRST')).toBe('duplicate');
    expect(await deliver(ledger, 'PAY_AFTER')).toBe('processed');
    expect(await deliver(ledger, 'PAY_FIRST')).toBe('duplicate');
    expect([await orders('PAY_FIRST'), await orders('PAY_DEALLOC'), await orders('PAY_AFTER')]).toEqual([1, 1, 1]);
  } finally {
    await pool.end();
  }
});

it("a pool in node-postgres's pipeline mode (which takes no pipeline of ours) opens each run as before: processed once, then a duplicate", async () => {
  const config: pg.PoolConfig & { readonly pipeline: boolean } = {
    connectionString: db.server.url,
    max: 1,
    pipeline: true,
  };
  const { pool, sent } = recordingPgPool(config);
  try {
    const ledger = await newLedger(fromPg(pool));
    sent.length = 0;
    expect(await deliver(ledger, 'PAY_PIPE')).toBe('processed');
    expect(sent).not.toContain('pipeline');
    expect(await deliver(ledger, 'PAY_PIPE')).toBe('duplicate');
    expect(await orders('PAY_PIPE')).toBe(1);
  } finally {
    await pool.end();
  }
});
