import { describe, expect, it } from 'vitest';
import { ConfigurationError } from '../../../../src/index.js';
import { checkTableName } from '../../../../src/sql/dialects/table-name.js';

describe('checkTableName: the one text the ledger writes into SQL', () => {
  it.each(['myr_webhook_ledger', '_t', 'Ledger2', 'payments.webhook_ledger', 'a'.repeat(63), `s.${'b'.repeat(63)}`])(
    'accepts %s',
    (name) => {
      expect(checkTableName(name).qualified).toBe(name);
    },
  );

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
});
