/**
 * On Postgres a payment outcome's run claims in its payment's row alone: that row, kept for good,
 * already makes a resend a duplicate and orders the payment's callbacks, so a callback writes one
 * row, not two. What merchants depend on is unchanged: each outcome fulfilled once, at any age; a
 * SUCCESS after its REFUNDED superseded; a run under a payment's key through `SqlLedger.run` with
 * no `order` (its TSDoc's example) the same outcome as the handler's. Real PostgreSQL 15, on
 * node-postgres and postgres.js, through the public SqlLedger.run and runOnce.
 */
import postgres from 'postgres';
import { describe, expect, it } from 'vitest';
import { fromPg, fromPostgresJs, type SqlLedger } from '../../../../src/sql/index.js';
import { paymentKey, runOnce } from '../../../../src/webhooks/index.js';
import { lifecycleRank } from '../../../../src/webhooks/lifecycle.js';
import { postgresForFile } from '../../../helpers/database-for-file.js';
import { newLedger } from '../scenarios.js';

const db = postgresForFile(2);
const DAY = 86_400_000;

/** A callback's run options, as the webhook handler gives them. */
const callback = (payment: string, status: 'SUCCESS' | 'REFUNDED' | 'FAILED') =>
  ({
    raiseMark: status === 'REFUNDED',
    completedTtlMs: DAY,
    order: { paymentId: payment, rank: lifecycleRank(status) },
  }) as const;

async function rowsOf(table: string): Promise<{ ledger_key: string; handled_statuses: number }[]> {
  return (await db.pool.query(`SELECT ledger_key, handled_statuses FROM ${table} ORDER BY ledger_key`)).rows;
}

/** Each client's ledger on a new table, and what ends the client. */
const clients: Record<string, () => Promise<{ ledger: SqlLedger<unknown>; end: () => Promise<void> }>> = {
  'node-postgres': async () => ({ ledger: await newLedger(fromPg(db.pool)), end: async () => undefined }),
  'postgres.js': async () => {
    const sql = postgres(db.server.url, { max: 2, onnotice: () => undefined });
    return { ledger: await newLedger(fromPostgresJs(sql)), end: () => sql.end({ timeout: 1 }) };
  },
};

describe.each(Object.keys(clients))('%s', (name) => {
  async function withLedger(body: (ledger: SqlLedger<unknown>) => Promise<void>) {
    const { ledger, end } = await clients[name]!();
    try {
      await body(ledger);
    } finally {
      await end();
    }
  }

  it("a payment's SUCCESS and REFUNDED write one row between them, the payment's, with both bits; each resend is a duplicate and a late SUCCESS superseded", async () => {
    await withLedger(async (ledger) => {
      let runs = 0;
      const work = () => void (runs += 1);
      const run = (status: 'SUCCESS' | 'REFUNDED') =>
        ledger.run(paymentKey('PAY_ONE_ROW', status), work, callback('PAY_ONE_ROW', status));
      expect((await run('SUCCESS')).outcome).toBe('processed');
      expect(await rowsOf(ledger.table)).toEqual([{ ledger_key: 'm:PAY_ONE_ROW', handled_statuses: 4 }]);
      expect((await run('SUCCESS')).outcome).toBe('duplicate');
      expect((await run('REFUNDED')).outcome).toBe('processed');
      expect((await run('REFUNDED')).outcome).toBe('duplicate');
      expect(runs).toBe(2);
      expect(await rowsOf(ledger.table)).toEqual([{ ledger_key: 'm:PAY_ONE_ROW', handled_statuses: 4 | 64 }]);
      // A SUCCESS the merchant's job resends, once its bit is cleared by hand: still after the refund.
      await db.pool.query(`UPDATE ${ledger.table} SET handled_statuses = 64`);
      expect((await run('SUCCESS')).outcome).toBe('superseded');
      expect(runs).toBe(2);
      // The one removal docs/ledger.md names: deleting the payment's row by hand forgets the payment.
      await db.pool.query(`DELETE FROM ${ledger.table} WHERE ledger_key = 'm:PAY_ONE_ROW'`);
      expect((await run('SUCCESS')).outcome).toBe('processed');
      expect(runs).toBe(3);
    });
  });

  it("a run keyed by delivery keeps its own row beside the payment's, and prune takes only that one once expired", async () => {
    await withLedger(async (ledger) => {
      const options = { ...callback('PAY_DELIVERY', 'SUCCESS'), completedTtlMs: 1 };
      expect((await ledger.run('webhook:dlv_1', () => undefined, options)).outcome).toBe('processed');
      expect((await rowsOf(ledger.table)).map((row) => row.ledger_key)).toEqual(['k:webhook:dlv_1', 'm:PAY_DELIVERY']);
      await new Promise((resolve) => setTimeout(resolve, 5));
      expect(await ledger.prune()).toBe(1);
      expect(await rowsOf(ledger.table)).toEqual([{ ledger_key: 'm:PAY_DELIVERY', handled_statuses: 0 }]);
    });
  });

  it("SqlLedger.run under a payment's key with no order is that payment's outcome: after the handler's run a duplicate, and the handler's after it too", async () => {
    await withLedger(async (ledger) => {
      let runs = 0;
      const work = () => void (runs += 1);
      const bare = { raiseMark: false, completedTtlMs: DAY };
      expect((await ledger.run(paymentKey('PAY_A', 'SUCCESS'), work, callback('PAY_A', 'SUCCESS'))).outcome).toBe(
        'processed',
      );
      expect((await ledger.run(paymentKey('PAY_A', 'SUCCESS'), work, bare)).outcome).toBe('duplicate');
      expect((await ledger.run(paymentKey('PAY_B', 'SUCCESS'), work, bare)).outcome).toBe('processed');
      expect((await ledger.run(paymentKey('PAY_B', 'SUCCESS'), work, callback('PAY_B', 'SUCCESS'))).outcome).toBe(
        'duplicate',
      );
      expect((await runOnce(ledger, paymentKey('PAY_B', 'SUCCESS'), work)).outcome).toBe('duplicate');
      expect(runs).toBe(2);
      expect((await rowsOf(ledger.table)).map((row) => row.ledger_key)).toEqual(['m:PAY_A', 'm:PAY_B']);
    });
  });
});
