import { describe, expect, it } from 'vitest';
import { ConfigurationError } from '../../../../src/index.js';
import { ormDialect, preparing, rowsOf } from '../../../../src/sql/adapters/adapter-options.js';

describe('ormDialect: one rule for the dialect of every ORM adapter', () => {
  it("takes 'postgres' or 'mysql', given or read, the given one first", () => {
    expect(ormDialect('postgres', 'mysql', 'fromX')).toBe('postgres');
    expect(ormDialect(undefined, 'mysql', 'fromX')).toBe('mysql');
  });

  it('otherwise asks for it in a ConfigurationError that says whose, and what it drives', () => {
    expect(() => ormDialect('sqlite', 'postgres', 'fromX could not tell')).toThrow(ConfigurationError);
    expect(() => ormDialect(undefined, undefined, 'fromX could not tell')).toThrow(
      /^fromX could not tell: give the dialect as the second argument, 'postgres' or 'mysql' \(the ledger supports their node-postgres and mysql2 drivers\)/,
    );
    expect(() => ormDialect(undefined, undefined, 'fromP', 'Prisma')).toThrow(/supports Prisma\)$/);
  });
});

describe('preparing: one rule for prepare in every adapter', () => {
  it.each([
    [{}, true],
    [{ prepare: true }, true],
    [{ prepare: false }, false],
  ])('%o -> %s', (options, expected) => {
    expect(preparing(options)).toBe(expected);
  });

  it.each([[{ prepare: 'no' }], [{ prepare: 0 }], [null], ['x']])('%o is a ConfigurationError', (options) => {
    expect(() => preparing(options)).toThrow(expect.objectContaining({ field: 'prepare' }));
  });
});

describe('rowsOf', () => {
  it('keeps the rows that are objects, and nothing of an answer that is no array', () => {
    expect(rowsOf([{ a: 1 }, 2, null, { b: 2 }])).toEqual([{ a: 1 }, { b: 2 }]);
    expect(rowsOf({ rows: [] })).toEqual([]);
  });
});
