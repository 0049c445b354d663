import { describe, expect, it } from 'vitest';
import { ConfigurationError } from '../../../../src/index.js';
import { checkTableName, claimOf, keyRow, markRow, params, statements } from '../../../../src/sql/dialects/statements.js';

describe('checkTableName: the one text the ledger writes into SQL', () => {
  it.each(['myr_webhook_ledger', '_t', 'Ledger2', 'payments.webhook_ledger', 'a'.repeat(63), `s.${'b'.repeat(63)}`])('accepts %s', (name) => {
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

describe('rows of keys and marks', () => {
  it('keeps a key and a payment id apart even when their text is the same', () => {
    expect(keyRow('PAY_1')).not.toBe(markRow('PAY_1'));
  });

  it('stores a long key as its SHA-256, so it fits the column, and two long keys stay apart', () => {
    const long = 'x'.repeat(300);
    expect(keyRow(long)).toMatch(/^h:[0-9a-f]{64}$/);
    expect(keyRow(long)).not.toBe(keyRow(`${long}y`));
    expect(keyRow('payment:PAY_1:SUCCESS')).toBe('k:payment:PAY_1:SUCCESS');
  });
});

describe('statements', () => {
  it.each(['postgres', 'mysql', 'sqlite'] as const)('%s: every value is a parameter: the statements hold no value, only the table name', (dialect) => {
    const sql = statements(dialect, 'shop.ledger', 'ledger');
    const text = [sql.claim, sql.claimOrdered, sql.readMark, sql.done, sql.lockMark ?? '', sql.claimBeside ?? '', sql.prune, sql.takeOver ?? ''].join('\n');
    expect(text).not.toMatch(/'/);
    expect(sql.schema.join('\n')).toContain('shop.ledger');
  });

  it("postgres, guarded (the claim sent before BEGIN's answer): both claims read the ledger's transaction mark, with the same parameters; the other statements are unchanged", () => {
    const plain = statements('postgres', 't', 't');
    const guarded = statements('postgres', 't', 't', true);
    for (const claim of ['claim', 'claimOrdered'] as const) {
      expect(plain[claim]).not.toContain('current_setting');
      expect(guarded[claim]).toContain("current_setting('myr_gateway.ledger_tx', true)");
      expect(new Set(guarded[claim].match(/\$\d+/g))).toEqual(new Set(plain[claim].match(/\$\d+/g)));
    }
    expect({ ...guarded, claim: '', claimOrdered: '' }).toEqual({ ...plain, claim: '', claimOrdered: '' });
  });

  it.each(['postgres', 'mysql', 'sqlite'] as const)("%s: every claim and takeover writes the run's id; the check before COMMIT compares it, not the expiry", (dialect) => {
    const sql = statements(dialect, 't', 't');
    for (const claim of [sql.claim, sql.claimOrdered, sql.claimBeside, sql.takeOver]) if (claim !== undefined) expect(claim).toContain('claim_id');
    expect(sql.done).toContain('claim_id = ');
    expect(sql.done).not.toContain('expires_at');
    expect(sql.schema[0]).toContain('claim_id');
    expect(sql.probe).toContain('claim_id');
  });

  it('claimOf: the row of the key, its expiry, and an id that is a safe integer of 53 bits, new for every claim', () => {
    const claims = Array.from({ length: 1000 }, () => claimOf('payment:PAY_1:SUCCESS', 1_000, 500));
    expect(claims[0]).toMatchObject({ row: keyRow('payment:PAY_1:SUCCESS'), until: 1_500 });
    expect(claims.every(({ id }) => Number.isSafeInteger(id) && id >= 0)).toBe(true);
    expect(new Set(claims.map(({ id }) => id)).size).toBe(claims.length);
    // Drawn over all 53 bits: among 1000 ids, some use the top ones (the odds otherwise are 2^-1000).
    expect(claims.some(({ id }) => id >= 2 ** 52)).toBe(true);
  });

  it('gives each statement as many parameters as it has placeholders', () => {
    const claim = claimOf('k', 1, 1);
    for (const dialect of ['postgres', 'mysql', 'sqlite'] as const) {
      const sql = statements(dialect, 't', 't');
      const p = params(dialect);
      const count = (text: string) => (dialect === 'postgres' ? new Set(text.match(/\$\d+/g)).size : (text.match(/\?/g) ?? []).length);
      expect(p.claim(claim, 1)).toHaveLength(count(sql.claim));
      expect(p.readMark('m', 1)).toHaveLength(count(sql.readMark));
      expect(p.done(claim)).toHaveLength(count(sql.done));
      expect(p.claimOrdered(claim, 1, 'm', 1, 0)).toHaveLength(count(sql.claimOrdered));
      if (sql.lockMark) expect(p.lockMark('m', 2, 3, 1)).toHaveLength(count(sql.lockMark));
      if (sql.claimBeside) expect(p.claimBeside('m', 0, claim)).toHaveLength(count(sql.claimBeside));
      // Postgres writes the mark in its claim; the others in a statement before it.
      expect(sql.lockMark === undefined).toBe(dialect === 'postgres');
      expect(p.prune(1, 10)).toHaveLength(count(sql.prune));
      if (sql.takeOver) expect(p.takeOver(claim, 1)).toHaveLength(count(sql.takeOver));
    }
  });
});
