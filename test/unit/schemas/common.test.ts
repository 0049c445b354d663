/**
 * src/schemas/common.ts: the spec's amount rules, judged on the decimal text so no float
 * rounding lets a wrong amount through or stops a right one, and the reference_id rule. Every
 * amount a merchant sends goes through `amountSchema`; the service receives the JSON number.
 */
import { describe, expect, it } from 'vitest';
import * as z from 'zod/mini';
import {
  amountFromWire,
  amountSchema,
  DEPOSIT_AMOUNT,
  hasAtMostTwoDecimals,
  referenceIdSchema,
  WITHDRAWAL_AMOUNT,
} from '../../../src/schemas/common.js';

const deposit = amountSchema(DEPOSIT_AMOUNT, 'deposit');
const withdrawal = amountSchema(WITHDRAWAL_AMOUNT, 'withdrawal');

/** The parsed value, or the first issue's message. */
function check(schema: z.ZodMiniType, value: unknown): { value: unknown } | { problem: string } {
  const result = z.safeParse(schema, value);
  return result.success ? { value: result.data } : { problem: result.error.issues[0]?.message ?? '' };
}

describe('amountSchema', () => {
  it.each([
    [5, 5],
    [50_000, 50_000],
    [19.99, 19.99],
    ['120.50', 120.5],
    ['5', 5],
    ['50000.00', 50_000],
  ])('accepts the deposit amount %j and sends the number %d', (input, sent) => {
    expect(check(deposit, input)).toEqual({ value: sent });
  });

  it.each([
    [4.99, /between 5 and 50000 MYR inclusive/],
    [50_000.01, /between 5 and 50000 MYR inclusive/],
    ['4.99', /between 5 and 50000/],
    [10.005, /at most 2 decimal places/],
    ['10.005', /at most 2 decimal places/],
    [10.1 + 0.2, /at most 2 decimal places/], // a sum in binary floats: 10.299999999999999, not 10.30
    [1e21, /between 5 and 50000/],
    [Number.NaN, /finite number/],
    [Number.POSITIVE_INFINITY, /finite number/],
    ['-10', /plain decimal/],
    ['1e3', /plain decimal/],
    ['1,000.00', /plain decimal/],
    [' 100', /plain decimal/],
    [null, /number or a decimal string/],
    [{ value: 100 }, /number or a decimal string/],
  ])('refuses the deposit amount %j', (input, problem) => {
    const result = check(deposit, input);
    expect(result).toHaveProperty('problem');
    expect((result as { problem: string }).problem).toMatch(problem);
  });

  it('withdrawals start at 50 MYR, deposits at 5', () => {
    expect(check(withdrawal, 49.99)).toEqual({
      problem: 'withdrawal amount must be between 50 and 50000 MYR inclusive',
    });
    expect(check(withdrawal, '50.00')).toEqual({ value: 50 });
    expect(check(deposit, 49.99)).toEqual({ value: 49.99 });
  });
});

describe('hasAtMostTwoDecimals and amountFromWire', () => {
  it.each([
    [19.99, true],
    [100, true],
    [1.005, false],
    [0.1 + 0.2, false],
    [Number.NaN, false],
  ])('hasAtMostTwoDecimals(%d) is %s', (amount, expected) => {
    expect(hasAtMostTwoDecimals(amount)).toBe(expected);
  });

  it('reads the numeric string a service may send as a number, and refuses anything else', () => {
    expect(check(amountFromWire, '149.90')).toEqual({ value: 149.9 });
    expect(check(amountFromWire, 250)).toEqual({ value: 250 });
    expect(check(amountFromWire, 'RM 10')).toHaveProperty('problem');
  });
});

describe('referenceIdSchema', () => {
  it.each([
    ['ORDER1001', true],
    ['a'.repeat(100), true],
    ['a'.repeat(101), false],
    ['', false],
    ['ORDER-1', false],
    ['ORDER 1', false],
    ['ÖRDER1', false],
    [1001, false],
  ])('%j → %s', (value, ok) => {
    expect(z.safeParse(referenceIdSchema, value).success).toBe(ok);
  });
});
