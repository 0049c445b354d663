import { describe, expect, it } from 'vitest';
import { PAYMENT_STATUSES } from '../../../../src/schemas/statuses.js';
import { handledBit, KEPT_FOR_GOOD } from '../../../../src/sql/ledger/handled-statuses.js';

describe("handledBit: a status's bit in a payment's record kept for good", () => {
  it.each([
    ['PENDING', 1],
    ['PROCESSING', 2],
    ['SUCCESS', 4],
    ['FAILED', 8],
    ['EXPIRED', 16],
    ['CANCELLED', 32],
    ['REFUNDED', 64],
    ['SETTLED', 0],
    ['success', 0],
    ['', 0],
    [undefined, 0],
  ])('%s -> %i', (status, bit) => {
    expect(handledBit(status)).toBe(bit);
  });

  it('gives every status of the spec its own bit, all within a SMALLINT', () => {
    const bits = PAYMENT_STATUSES.map(handledBit);
    expect(new Set(bits).size).toBe(PAYMENT_STATUSES.length);
    expect(bits.reduce((all, bit) => all | bit, 0)).toBeLessThan(2 ** 15);
  });

  it('keeps a payment for good: an expiry no clock reaches, exact in JavaScript and in a BIGINT', () => {
    expect(Number.isSafeInteger(KEPT_FOR_GOOD)).toBe(true);
    expect(KEPT_FOR_GOOD).toBeGreaterThan(Date.now() * 1000);
  });
});
