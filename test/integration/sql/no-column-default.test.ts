/**
 * The ledger and the payout outbox never rely on a column's DEFAULT, on real Postgres, MariaDB and SQLite: a table
 * whose `handled_statuses` lost its `DEFAULT 0` (what drizzle-kit push's `MODIFY COLUMN` leaves
 * on MariaDB, and what a hand-written migration may forget) passes `ensureSchema({ create: false })`,
 * so every insert the ledger makes writes the column itself. Before, every REFUNDED (and any
 * second status of a payment) failed on such a table with ER_NO_DEFAULT_FOR_FIELD or a NOT NULL
 * violation: 503 until the gateway gave up.
 */
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SqlLedger, SqlPayouts, fromMysql2, fromPg, fromSqlite, type SqlClient } from '../../../src/sql/index.js';
import { lifecycleRank } from '../../../src/webhooks/lifecycle.js';
import { mariadbForFile, postgresForFile } from '../../helpers/database-for-file.js';
import { migrate, statementsOf } from '../../helpers/schema-migration.js';

const pgDb = postgresForFile(4);
const mariaDb = mariadbForFile({ connectionLimit: 4 });
let dir: string;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'myr-no-default-'));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const clients: Record<string, () => SqlClient<unknown>> = {
  'node-postgres': () => fromPg(pgDb.pool),
  'mysql2 (MariaDB)': () => fromMysql2(mariaDb.pool),
  'node:sqlite': () => fromSqlite(join(dir, 'shop.db')),
};

describe.each(Object.entries(clients))('%s', (_name, client) => {
  it('a table whose handled_statuses has no DEFAULT records SUCCESS, then REFUNDED, then each resend as handled', async () => {
    const table = `ledger_${randomUUID().replaceAll('-', '').slice(0, 12)}`;
    const ledger = new SqlLedger(client(), { table });
    const ddl = ledger.schemaSql().replace(' DEFAULT 0', '');
    expect(ddl).not.toContain('DEFAULT');
    for (const statement of statementsOf(ddl)) await migrate(client(), statement);
    await ledger.ensureSchema({ create: false });

    const payment = `PAY_${randomUUID()}`;
    const run = (status: 'SUCCESS' | 'REFUNDED', key = `payment:${payment}:${status}`) =>
      ledger.run(key, () => status, {
        raiseMark: status === 'REFUNDED',
        completedTtlMs: 86_400_000,
        order: { paymentId: payment, rank: lifecycleRank(status) },
      });
    expect(await run('SUCCESS')).toEqual({ outcome: 'processed', value: 'SUCCESS' });
    expect(await run('REFUNDED')).toEqual({ outcome: 'processed', value: 'REFUNDED' });
    expect((await run('REFUNDED')).outcome).toBe('duplicate');
    expect(['duplicate', 'superseded']).toContain((await run('SUCCESS')).outcome);
  });

  it('a payouts table whose attempts has no DEFAULT stages a payout, with attempts 0', async () => {
    const table = `payouts_${randomUUID().replaceAll('-', '').slice(0, 12)}`;
    const payouts = new SqlPayouts(client(), { table, onRefused: () => undefined, onSettled: () => undefined });
    const ddl = payouts.schemaSql().replace(' DEFAULT 0', '');
    expect(ddl).not.toContain('DEFAULT');
    for (const statement of statementsOf(ddl)) await migrate(client(), statement);
    await payouts.ensureSchema({ create: false });
    const reference_id = `PAYOUT${randomUUID().replaceAll('-', '').slice(0, 12)}`;
    await payouts.transaction(({ tx }) =>
      payouts.stage(tx, {
        amount: '250.00',
        reference_id,
        bank_code: 'PBBEMYKL',
        account_number: '5140123456789',
        account_name: 'Tan Wei Ming',
      }),
    );
    expect(await payouts.get(reference_id)).toEqual({ referenceId: reference_id, state: 'staged', attempts: 0 });
  });
});
