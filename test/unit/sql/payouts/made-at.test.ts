/**
 * src/sql/payouts/made-at.ts, every form: which texts the day rule (A29) reads as a time, and
 * which prove nothing (NaN, so no refusal).
 */
import { describe, expect, it } from 'vitest';
import { madeAt } from '../../../../src/sql/payouts/made-at.js';

describe('madeAt', () => {
  it.each([
    ['2026-11-27T21:54:30Z', Date.UTC(2026, 10, 27, 21, 54, 30)],
    ['2026-11-27T21:54:30.123+08:00', Date.UTC(2026, 10, 27, 13, 54, 30, 123)],
    ['2026-11-27T21:54:30', Date.UTC(2026, 10, 27, 21, 54, 30)],
    ['2026-11-27T21:54Z', Date.UTC(2026, 10, 27, 21, 54)],
    ['2026-11-27T21:54', Date.UTC(2026, 10, 27, 21, 54)],
    ['2026-11-27 21:54+08:00', Date.UTC(2026, 10, 27, 13, 54)],
    ['2026-11-27T21:54-0230', Date.UTC(2026, 10, 28, 0, 24)],
    ['20261127T215430Z', Date.UTC(2026, 10, 27, 21, 54, 30)],
    ['20261127T215430.5Z', Date.UTC(2026, 10, 27, 21, 54, 30, 500)],
    ['20261127T215430+0800', Date.UTC(2026, 10, 27, 13, 54, 30)],
    ['20261127T2154Z', Date.UTC(2026, 10, 27, 21, 54)],
    ['20261127t215430z', Date.UTC(2026, 10, 27, 21, 54, 30)],
  ])('%s is a time', (text, ms) => {
    expect(madeAt(text)).toBe(ms);
  });

  it.each([
    '2026-11-27',
    '20261127',
    '2026-11-27T21',
    '20261332T000000Z',
    '2026-02-30T10:00Z',
    '2026-11-27T25:00Z',
    '1732744470',
    'yesterday',
    '',
    null,
    undefined,
    `2026-11-27T21:54:30${'0'.repeat(40)}Z`,
  ])('%s proves nothing (NaN)', (text) => {
    expect(madeAt(text)).toBeNaN();
  });
});
