import { describe, expect, it } from 'vitest';
import { ConfigurationError } from '../../../../src/index.js';
import { checkSqliteSchema, checkTableName } from '../../../../src/sql/dialects/table-name.js';
import { SqlLedger, fromSqlite } from '../../../../src/sql/index.js';
import { sqliteFile } from '../../../helpers/sqlite-file.js';

describe('checkTableName: the one text the ledger writes into SQL', () => {
  it.each([
    'myr_webhook_ledger',
    '_t',
    'ledger2',
    'orders',
    'users',
    'payments.webhook_ledger',
    'a'.repeat(63),
    `s.${'b'.repeat(63)}`,
  ])('accepts %s', (name) => {
    expect(checkTableName(name).qualified).toBe(name);
  });

  it.each([
    '',
    '1ledger',
    'ledger-x',
    'ledger; DROP TABLE orders',
    '"quoted"',
    'a.b.c',
    '.ledger',
    'ledger.',
    'a'.repeat(64),
    'ledger name',
    'lédger',
    'MyrLedger',
    'payments.Ledger',
    'order',
    'user',
    'select',
    'group',
    'table',
    'from',
    'where',
    'key',
    'order.ledger',
    42,
    undefined,
  ])('refuses %s with a ConfigurationError naming the option', (name) => {
    expect(() => checkTableName(name)).toThrow(ConfigurationError);
    try {
      checkTableName(name);
    } catch (error) {
      expect(error).toMatchObject({ code: 'INVALID_CONFIGURATION', field: 'table' });
    }
  });

  it('says why a name with capitals is refused, and which name to use', () => {
    expect(() => checkTableName('MyrLedger')).toThrow(/table must be lower case \(myrledger, not MyrLedger\)/);
  });

  it('says a reserved word is refused as one', () => {
    expect(() => checkTableName('order')).toThrow(/table must not be the SQL reserved word order/);
  });
});

describe("checkSqliteSchema: on SQLite the table is in the file, never in the ledger's connection's temp", () => {
  it.each([
    ['myr_webhook_ledger', true],
    ['main.myr_webhook_ledger', true],
    ['temp.myr_webhook_ledger', false],
    ['shop.myr_webhook_ledger', false],
  ])('%s: %s', (table, accepted) => {
    const check = () => checkSqliteSchema(checkTableName(table));
    if (accepted) expect(check).not.toThrow();
    else expect(check).toThrow(ConfigurationError);
  });

  it('SqlLedger on SQLite refuses temp (a ledger empty after each restart handles every callback again)', () => {
    expect(() => new SqlLedger(fromSqlite(sqliteFile()), { table: 'temp.myr_webhook_ledger' })).toThrow(
      expect.objectContaining({ field: 'table', message: expect.stringContaining('empty after a restart') }),
    );
  });
});
