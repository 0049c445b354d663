/** Exact decimal amounts shared by the client and confirmDeposit (src/schemas/amount.ts). */
import { describe, expect, it } from 'vitest';
import { amountText, sameAmount } from '../../../src/schemas/amount.js';

describe('sameAmount', () => {
  it.each([
    [149.9, '149.90', true],
    ['149.90', '149.9', true],
    ['0149.90', 149.9, true],
    [100, '100.00', true],
    [1.005, 1.01, false],
    [0.1 + 0.2, '0.3', false],
    ['149.90', 149.91, false],
    ['1e3', 1000, false],
    ['1,000', 1000, false],
    [' 5', 5, false],
    ['-5', -5, false],
    [Number.NaN, Number.NaN, false],
    [undefined, undefined, false],
  ])('%s and %s: %s', (a, b, same) => {
    expect(sameAmount(a, b)).toBe(same);
  });

  it('reads only plain decimals', () => {
    expect(amountText(120.5)).toBe('120.5');
    expect(amountText('120.50')).toBe('120.50');
    expect(amountText(1e21)).toBeUndefined();
    expect(amountText(Infinity)).toBeUndefined();
  });
});
