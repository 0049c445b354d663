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
import { lifecycleRank } from '../../../../src/webhooks/lifecycle.js';
import { postgresForFile } from '../../../helpers/database-for-file.js';
import { newLedger } from '../scenarios.js';

const db = postgresForFile(2, (admin) => admin.query('CREATE TABLE orders (payment_id TEXT NOT NULL)'));

/** A SUCCESS callback's run options, as the webhook handler gives them. */
const success = (payment: string) =>
  ({
    raiseMark: false,
    completedTtlMs: 86_400_000,
    order: { paymentId: payment, rank: lifecycleRank('SUCCESS') },
  }) as const;

const orders = async (payment: string) =>
  Number((await db.pool.query('SELECT count(*) AS n FROM orders WHERE payment_id = $1', [payment])).rows[0].n);

/** A pool whose clients record what each `query` call was given: SQL text, or what else (a pipeline). */
function recordingPool(config: pg.PoolConfig): { pool: pg.Pool; sent: string[] } {
  const pool = new pg.Pool(config);
  const sent: string[] = [];
  pool.on('connect', (client) => {
    const query = client.query.bind(client) as (...args: unknown[]) => unknown;
    Object.assign(client, {
      query: (...args: unknown[]) => {
        const [first] = args;
        sent.push(
          typeof first === 'string'
            ? first
            : typeof first === 'object' && first !== null && 'text' in first
              ? String(first.text)
              : 'pipeline',
        );
        return query(...args);
      },
    });
  });
  return { pool, sent };
}

const fulfil = (payment: string) => async (tx: pg.PoolClient) =>
  void (await tx.query('INSERT INTO orders (payment_id) VALUES ($1)', [payment]));

it('a callback is two round trips, BEGIN with its claim and COMMIT; its write commits with the claim, and its resend is a duplicate', async () => {
  const { pool, sent } = recordingPool({ connectionString: db.server.url, max: 1 });
  try {
    const ledger = await newLedger(fromPg(pool));
    sent.length = 0;
    const run = await ledger.run('payment:PAY_RT:SUCCESS', fulfil('PAY_RT'), success('PAY_RT'));
    expect(run.outcome).toBe('processed');
    expect(sent).toEqual(['pipeline', 'INSERT INTO orders (payment_id) VALUES ($1)', 'COMMIT']);
    expect((await ledger.run('payment:PAY_RT:SUCCESS', fulfil('PAY_RT'), success('PAY_RT'))).outcome).toBe('duplicate');
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
    expect(
      (await ledger.run('payment:PAY_RT_FAILS:SUCCESS', fulfil('PAY_RT_FAILS'), success('PAY_RT_FAILS'))).outcome,
    ).toBe('processed');
    expect([await orders('PAY_RT'), await orders('PAY_RT_FAILS')]).toEqual([1, 1]);
  } finally {
    await pool.end();
  }
});

it('a claim that waited out lockTimeoutMs in its first pipeline on a connection leaves that connection able to claim again', async () => {
  const holding = new pg.Pool({ connectionString: db.server.url, max: 1 });
  const waiting = new pg.Pool({ connectionString: db.server.url, max: 1 });
  try {
    const first = await newLedger(fromPg(holding));
    const second = await newLedger(fromPg(waiting), { table: first.table, lockTimeoutMs: 300 });
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    let started!: () => void;
    const running = new Promise<void>((resolve) => (started = resolve));
    const held = first.run(
      'payment:PAY_HELD:SUCCESS',
      async (tx) => {
        await fulfil('PAY_HELD')(tx);
        started();
        await gate;
      },
      success('PAY_HELD'),
    );
    await running;
    // The waiting pool's only connection: its claim, prepared in this pipeline, waits on the held payment's row.
    expect((await second.run('payment:PAY_HELD:SUCCESS', fulfil('PAY_HELD'), success('PAY_HELD'))).outcome).toBe(
      'in_flight',
    );
    release();
    expect((await held).outcome).toBe('processed');
    expect((await second.run('payment:PAY_NEXT:SUCCESS', fulfil('PAY_NEXT'), success('PAY_NEXT'))).outcome).toBe(
      'processed',
    );
    expect((await second.run('payment:PAY_HELD:SUCCESS', fulfil('PAY_HELD'), success('PAY_HELD'))).outcome).toBe(
      'duplicate',
    );
    expect([await orders('PAY_HELD'), await orders('PAY_NEXT')]).toEqual([1, 1]);
  } finally {
    await holding.end();
    await waiting.end();
  }
});

it('a DEALLOCATE ALL the handler sends through tx costs no callback after it: the next is processed, a resend is a duplicate', async () => {
  const pool = new pg.Pool({ connectionString: db.server.url, max: 1 });
  try {
    const ledger = await newLedger(fromPg(pool));
    expect((await ledger.run('payment:PAY_FIRST:SUCCESS', fulfil('PAY_FIRST'), success('PAY_FIRST'))).outcome).toBe(
      'processed',
    );
    // A resend reads the payment's row with a statement node-postgres prepares on the connection.
    expect((await ledger.run('payment:PAY_FIRST:SUCCESS', fulfil('PAY_FIRST'), success('PAY_FIRST'))).outcome).toBe(
      'duplicate',
    );
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
    expect((await ledger.run('payment:PAY_FIRST:SUCCESS', fulfil('PAY_FIRST'), success('PAY_FIRST'))).outcome).toBe(
      'duplicate',
    );
    const next = await ledger.run('payment:PAY_AFTER:SUCCESS', fulfil('PAY_AFTER'), success('PAY_AFTER'));
    expect(next.outcome).toBe('processed');
    expect((await ledger.run('payment:PAY_FIRST:SUCCESS', fulfil('PAY_FIRST'), success('PAY_FIRST'))).outcome).toBe(
      'duplicate',
    );
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
  const { pool, sent } = recordingPool(config);
  try {
    const ledger = await newLedger(fromPg(pool));
    sent.length = 0;
    expect((await ledger.run('payment:PAY_PIPE:SUCCESS', fulfil('PAY_PIPE'), success('PAY_PIPE'))).outcome).toBe(
      'processed',
    );
    expect(sent).not.toContain('pipeline');
    expect((await ledger.run('payment:PAY_PIPE:SUCCESS', fulfil('PAY_PIPE'), success('PAY_PIPE'))).outcome).toBe(
      'duplicate',
    );
    expect(await orders('PAY_PIPE')).toBe(1);
  } finally {
    await pool.end();
  }
});
