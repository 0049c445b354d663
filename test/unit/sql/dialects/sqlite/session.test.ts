import { describe, expect, it } from 'vitest';
import { BEGIN, isBusyCode } from '../../../../../src/sql/dialects/sqlite/session.js';

describe("a SQLite run's transaction", () => {
  it('takes the write lock at BEGIN', () => {
    expect(BEGIN).toBe('BEGIN IMMEDIATE');
  });

  it.each([
    [5, true],
    [6, true],
    [517, true], // SQLITE_BUSY_SNAPSHOT: an extended code whose low byte is BUSY
    [19, false],
    [787, false],
  ])('isBusyCode(%i) is %s', (code, expected) => {
    expect(isBusyCode(code)).toBe(expected);
  });
});
