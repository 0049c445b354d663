/**
 * src/sql/payouts/payouts.ts on real SQLite in memory: the options it refuses, the DDL it gives a
 * migration tool, and what `settle` answers for callbacks that are not a sent payout's. The
 * whole flow through every database: test/integration/payouts-*.test.ts.
 */
import type { DatabaseSync } from 'node:sqlite';
import { inspect } from 'node:util';
import pg from 'pg';
import { sqliteFile } from '../../../helpers/sqlite-file.js';
import { describe, expect, it } from 'vitest';
import { MyrGateway } from '../../../../src/index.js';
import { SqlPayouts, fromPg, fromSqlite, type PayoutGateway } from '../../../../src/sql/index.js';
import type { WebhookEvent } from '../../../../src/webhooks/index.js';

const hooks = { onRefused: () => undefined, onSettled: () => undefined };
const params = {
  amount: '250.00',
  reference_id: 'PAYOUT1',
  bank_code: 'PBBEMYKL',
  account_number: '5140123456789',
  account_name: 'Tan Wei Ming',
};

function event(
  fields: Partial<WebhookEvent['signed']>,
  transaction_type: 'DEPOSIT' | 'WITHDRAWAL' = 'WITHDRAWAL',
): WebhookEvent {
  const signed = {
    webhook_id: 'w',
    payment_id: 'WD_1',
    reference_id: 'PAYOUT1',
    amount: 250,
    currency: 'MYR',
    status: 'SUCCESS' as const,
    timestamp: '',
    completed_at: null,
    ...fields,
  };
  const unsigned = {
    gateway_reference: null,
    created_at: null,
    transaction_type,
    bank_code: null,
    account_number: null,
  };
  return transaction_type === 'WITHDRAWAL'
    ? { transaction_type, signed, signature: '', keyIndex: 0, unsigned: { ...unsigned, transaction_type } }
    : {
        transaction_type,
        signed,
        signature: '',
        keyIndex: 0,
        unsigned: { gateway_reference: null, created_at: null, transaction_type },
      };
}

async function fresh() {
  const payouts = new SqlPayouts(fromSqlite(sqliteFile()), hooks);
  await payouts.ensureSchema();
  await payouts.ensureSchema(); // idempotent
  return payouts;
}

describe('SqlPayouts', () => {
  it('refuses a client that is not an adapter, missing hooks and a table name that is no identifier', () => {
    const client = fromSqlite(sqliteFile());
    expect(() => new SqlPayouts({} as never, hooks)).toThrow(
      expect.objectContaining({ code: 'INVALID_CONFIGURATION', field: 'client' }),
    );
    expect(() => new SqlPayouts(client, { onSettled: hooks.onSettled } as never)).toThrow(
      expect.objectContaining({ field: 'onRefused' }),
    );
    expect(() => new SqlPayouts(client, { onRefused: hooks.onRefused } as never)).toThrow(
      expect.objectContaining({ field: 'onSettled' }),
    );
    expect(() => new SqlPayouts(client, { ...hooks, table: 'payouts; DROP TABLE x' })).toThrow(
      expect.objectContaining({ field: 'table' }),
    );
    expect(() => new SqlPayouts(client, { ...hooks, lockTimeoutMs: 0 })).toThrow(
      expect.objectContaining({ field: 'lockTimeoutMs' }),
    );
    expect(new SqlPayouts(client, { ...hooks, table: 'main.payouts' }).table).toBe('main.payouts');
    // On SQLite the table is in the file: temp is the ledger's connection's alone, gone on restart.
    for (const table of ['temp.payouts', 'shop.payouts'])
      expect(() => new SqlPayouts(client, { ...hooks, table })).toThrow(
        expect.objectContaining({
          field: 'table',
          message: expect.stringContaining('on SQLite the table must be in the database file'),
        }),
      );
    // Its pace table and index add _pace and _requested: Postgres would cut a 63-character name's.
    expect(new SqlPayouts(client, { ...hooks, table: `main.${'p'.repeat(53)}` }).table).toBe(`main.${'p'.repeat(53)}`);
    expect(() => new SqlPayouts(client, { ...hooks, table: 'p'.repeat(54) })).toThrow(
      expect.objectContaining({ field: 'table', message: expect.stringContaining('at most 53 characters') }),
    );
  });

  it('gives each dialect its DDL for the table, and refuses another dialect', () => {
    const payouts = new SqlPayouts(fromSqlite(sqliteFile()), { ...hooks, table: 'main.payouts' });
    expect(payouts.schemaSql()).toMatch(
      /^CREATE TABLE IF NOT EXISTS main\.payouts \(reference_id TEXT NOT NULL PRIMARY KEY/,
    );
    expect(payouts.schemaSql('postgres')).toContain('CREATE INDEX IF NOT EXISTS payouts_due ON main.payouts');
    expect(payouts.schemaSql('mysql')).toContain('ENGINE=InnoDB;\n');
    expect(() => payouts.schemaSql('oracle' as never)).toThrow(expect.objectContaining({ field: 'dialect' }));
  });

  it('get answers undefined for a reference never staged', async () => {
    expect(await (await fresh()).get('PAYOUT404')).toBeUndefined();
  });

  it("settle: 'unknown' for a deposit, a reference never staged, or one only staged (never sent); a tx of no open transaction is refused", async () => {
    const payouts = await fresh();
    await payouts.transaction(({ tx }) => payouts.stage(tx, params));
    await expect(payouts.settle(event({}), { tx: {} as DatabaseSync })).rejects.toMatchObject({
      code: 'INVALID_CONFIGURATION',
      field: 'tx',
    });
    const answers = await payouts.transaction(async ({ tx }) => [
      await payouts.settle(event({}, 'DEPOSIT'), { tx }),
      await payouts.settle(event({ reference_id: 'PAYOUT2' }), { tx }),
      await payouts.settle(event({}), { tx }),
    ]);
    expect(answers).toEqual(['unknown', 'unknown', 'unknown']);
    expect(await payouts.get('PAYOUT1')).toMatchObject({ state: 'staged' });
  });

  it("settle: 'unknown' for a sent payout's reference with another amount (not this payout's callback); its own amount settles it", async () => {
    const payouts = await fresh();
    await payouts.transaction(({ tx }) => payouts.stage(tx, params));
    const gateway = {
      withdrawals: { create: async () => ({ payment_id: 'WD_1', reference_id: 'PAYOUT1' }) },
      payments: {},
    } as unknown as PayoutGateway;
    expect(await payouts.worker(gateway).drain()).toMatchObject({ sent: 1 });
    const answers = await payouts.transaction(async ({ tx }) => [
      await payouts.settle(event({ amount: 2500 }), { tx }),
      await payouts.settle(event({}), { tx }),
    ]);
    expect(answers).toEqual(['unknown', 'settled']);
  });

  it('shows neither the database password nor the api key in a log (util.inspect, JSON)', async () => {
    const pool = new pg.Pool({ connectionString: 'postgres://shop:DB_PASSWORD_1@127.0.0.1:1/shop' });
    try {
      const payouts = new SqlPayouts(fromPg(pool), hooks);
      const worker = payouts.worker(
        new MyrGateway({
          baseUrl: 'https://api.example.com/api/v1',
          merchantId: 'M1',
          apiKey: 'sk_live_API_KEY_000001',
        }),
      );
      for (const view of [
        inspect(payouts, { depth: null, showHidden: true }),
        inspect(worker, { depth: null, showHidden: true }),
        JSON.stringify(payouts),
        JSON.stringify(worker),
      ]) {
        expect(view).not.toMatch(/DB_PASSWORD_1|API_KEY_000001/);
      }
      expect(inspect(payouts)).toBe("SqlPayouts { table: 'myr_payouts' }");
    } finally {
      await pool.end();
    }
  });
});
