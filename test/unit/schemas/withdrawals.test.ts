/**
 * src/schemas/withdrawals.ts maskAccountNumber: a full account number never sits in what the
 * SDK returns or logs; it keeps the last four characters the service shows in callbacks, and
 * leaves an already-masked number as it is.
 */
import { describe, expect, it } from 'vitest';
import { maskAccountNumber } from '../../../src/schemas/withdrawals.js';

describe('maskAccountNumber', () => {
  it.each([
    ['5140123456789', '****6789'],
    ['1234', '****1234'],
    ['12-3456-7890', '****7890'],
    ['****6789', '****6789'],
    ['**6789', '**6789'],
    ['***', '***'],
  ])('%s → %s', (input, masked) => {
    expect(maskAccountNumber(input)).toBe(masked);
  });

  it('a number with asterisks inside it is still masked (only a leading run of asterisks is a mask)', () => {
    expect(maskAccountNumber('5140*23456789')).toBe('****6789');
    expect(maskAccountNumber('****56789')).toBe('****6789');
  });
});
