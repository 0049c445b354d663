/**
 * src/sql/payouts/staged-row.ts: what `stage` writes for a request (its JSON in ASCII, read back
 * as the same request) and which requests it refuses because a column would cut them.
 */
import { describe, expect, it } from 'vitest';
import { stagedRow } from '../../../../src/sql/payouts/staged-row.js';
import { PARAMS_MAX_BYTES, WRITTEN } from '../../../../src/sql/payouts/statement-shape.js';

const request = {
  amount: '250.00',
  reference_id: 'PAYOUT1',
  bank_code: 'PBBEMYKL',
  account_number: '5140123456789',
  account_name: 'Tan Wei Ming',
  currency: 'MYR' as const,
  method: 'BANK' as const,
};

describe('stagedRow', () => {
  it.each(['陈伟明', 'Tan Wéi Míng', 'emoji 😀 and a lone \ud800 surrogate', 'DEL \u007f', 'plain'])(
    'writes %s as ASCII JSON that reads back as the same request',
    (name) => {
      const row = stagedRow({ ...request, account_name: name }, 1);
      expect(row.params).toMatch(/^[\x20-\x7e]*$/);
      expect(JSON.parse(row.params)).toEqual({ ...request, account_name: name });
      expect(row).toMatchObject({ referenceId: 'PAYOUT1', amount: '250.00', now: 1 });
    },
  );

  it.each([
    ['an amount of 32 characters', { amount: `${'0'.repeat(WRITTEN.amount - 5)}50.00` }, undefined],
    ['an amount of 33 characters', { amount: `${'0'.repeat(WRITTEN.amount - 4)}50.00` }, 'amount'],
    ['a name that fills the JSON to its last byte', 'fill', undefined],
    ['a name one byte past it', 'over', 'account_name'],
    ['a name whose escapes take it past the bound (6 bytes a character)', 'escaped', 'account_name'],
  ] as const)('%s: %s', (_, change, field) => {
    const base = JSON.stringify(request).length - request.account_name.length;
    const fitted =
      change === 'fill'
        ? { account_name: 'A'.repeat(PARAMS_MAX_BYTES - base) }
        : change === 'over'
          ? { account_name: 'A'.repeat(PARAMS_MAX_BYTES - base + 1) }
          : change === 'escaped'
            ? { account_name: '陈'.repeat(Math.ceil((PARAMS_MAX_BYTES - base) / 6) + 1) }
            : change;
    const run = () => stagedRow({ ...request, ...fitted }, 1);
    if (field === undefined) expect(run().params.length).toBeLessThanOrEqual(PARAMS_MAX_BYTES);
    else
      expect(run).toThrow(
        expect.objectContaining({
          name: 'InvalidRequestError',
          code: 'VALIDATION_ERROR',
          field,
          referenceId: 'PAYOUT1',
        }),
      );
  });

  it('never puts the values in its message', () => {
    const run = () => stagedRow({ ...request, account_name: 'Z'.repeat(PARAMS_MAX_BYTES) }, 1);
    expect(run).toThrow(expect.objectContaining({ message: expect.not.stringContaining('5140123456789') }));
    expect(run).toThrow(expect.objectContaining({ message: expect.not.stringContaining('ZZZZ') }));
  });
});
