import { describe, expect, it } from 'vitest';
import { ConfigurationError } from '../../../../src/index.js';
import { checkTableName } from '../../../../src/sql/dialects/table-name.js';

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
