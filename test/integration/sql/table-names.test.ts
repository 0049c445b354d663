/**
 * Table names the ledger's unquoted SQL cannot hold, on real Postgres: `{ table: 'MyrLedger' }`
 * passed the check, ensureSchema created `myrledger` (Postgres folds an unquoted name) and then
 * could not find `MyrLedger`, and Drizzle's `pgLedgerTable('MyrLedger')` made a quoted
 * "MyrLedger" the ledger never found (503 on every callback); the payouts outbox named `order`
 * failed with syntax error 42601. Both are refused when built, before any SQL.
 */
import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { mysqlLedgerTable, pgLedgerTable, sqliteLedgerTable } from '../../../src/drizzle/index.js';
import { ConfigurationError } from '../../../src/index.js';
import { SqlLedger, SqlPayouts, fromPg } from '../../../src/sql/index.js';
import { postgresForFile } from '../../helpers/database-for-file.js';

const pgDb = postgresForFile(2);

describe('table names the unquoted SQL cannot hold', () => {
  it('Postgres: MyrLedger is refused when the ledger or its Drizzle table is built (ensureSchema made myrledger, then could not find MyrLedger); myrledger runs', async () => {
    for (const build of [
      () => new SqlLedger(fromPg(pgDb.pool), { table: 'MyrLedger' }),
      () => pgLedgerTable('MyrLedger'),
      () => mysqlLedgerTable('MyrLedger'),
      () => sqliteLedgerTable('MyrLedger'),
    ])
      expect(build).toThrow(/table must be lower case \(myrledger, not MyrLedger\)/);
    const table = `myrledger_${randomUUID().replaceAll('-', '').slice(0, 12)}`;
    const ledger = new SqlLedger(fromPg(pgDb.pool), { table });
    await ledger.ensureSchema();
    await ledger.ensureSchema({ create: false });
  });

  it('the payouts outbox named order is refused before any SQL (it failed with syntax error 42601)', () => {
    const build = () =>
      new SqlPayouts(fromPg(pgDb.pool), { table: 'order', onRefused: () => undefined, onSettled: () => undefined });
    expect(build).toThrow(ConfigurationError);
    expect(build).toThrow(/table must not be the SQL reserved word order/);
  });
});
