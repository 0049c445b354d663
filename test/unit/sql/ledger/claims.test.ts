import { describe, expect, it } from 'vitest';
import { claimOf, keyRow, markRow } from '../../../../src/sql/ledger/claims.js';

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

  it('claimOf: the row of the key, its expiry, and an id that is a safe integer of 53 bits, new for every claim', () => {
    const claims = Array.from({ length: 1000 }, () => claimOf('payment:PAY_1:SUCCESS', 1_000, 500));
    expect(claims[0]).toMatchObject({ row: keyRow('payment:PAY_1:SUCCESS'), until: 1_500 });
    expect(claims.every(({ id }) => Number.isSafeInteger(id) && id >= 0)).toBe(true);
    expect(new Set(claims.map(({ id }) => id)).size).toBe(claims.length);
    // Drawn over all 53 bits: among 1000 ids, some use the top ones (the odds otherwise are 2^-1000).
    expect(claims.some(({ id }) => id >= 2 ** 52)).toBe(true);
  });
});
