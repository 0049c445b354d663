import { describe, expect, it } from 'vitest';
import {
  beginRun,
  boundLockWaits,
  CHECK_THEN_COMMIT,
  LEDGER_TX,
  transactionNotOpen,
} from '../../../../../src/sql/dialects/postgres/session.js';

describe("a Postgres run's transaction", () => {
  it('opens with BEGIN, its lock bound in ms and the mark COMMIT checks, in one simple query', () => {
    expect(beginRun(1500)).toBe(`BEGIN; SET LOCAL lock_timeout = 1500; SET LOCAL ${LEDGER_TX} = 'on'`);
    expect(boundLockWaits(250)).toBe('SET LOCAL lock_timeout = 250');
  });

  it('commits only after the check that reads the mark, in the same simple query', () => {
    expect(CHECK_THEN_COMMIT).toMatch(
      new RegExp(`^SELECT CASE WHEN current_setting\\('${LEDGER_TX.replace('.', '\\.')}', true\\) = 'on' .*; COMMIT$`),
    );
  });

  it.each([
    [{ code: '22P02' }, true],
    [{ code: '25P02' }, false],
    [new Error('22P02'), false],
    [null, false],
  ])('transactionNotOpen(%o) is %s', (error, expected) => {
    expect(transactionNotOpen(error)).toBe(expected);
  });
});
