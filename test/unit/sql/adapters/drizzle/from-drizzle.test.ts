import { describe, expect, it } from 'vitest';
import { fromDrizzle } from '../../../../../src/sql/index.js';

describe('fromDrizzle', () => {
  it('refuses what has no transaction()', () => {
    // @ts-expect-error: not a Drizzle database
    expect(() => fromDrizzle({})).toThrow(/Drizzle database/);
  });

  it("reads the dialect from Drizzle's entity kind, else asks for it", () => {
    const ENTITY_KIND: unique symbol = Symbol.for('drizzle:entityKind');
    class PgDialect {
      static [ENTITY_KIND] = 'PgDialect';
    }
    const db = { dialect: new PgDialect(), transaction: async () => undefined };
    expect(fromDrizzle(db).dialect).toBe('postgres');
    expect(() => fromDrizzle({ transaction: async () => undefined })).toThrow(/second argument/);
    expect(fromDrizzle({ transaction: async () => undefined }, 'postgres').dialect).toBe('postgres');
  });

  it("starts the ledger's MySQL transaction READ COMMITTED (its claim reads the mark without a gap lock), and leaves Postgres's as it is", async () => {
    const levels: string[] = [];
    const drizzle = {
      transaction: async (_fn: unknown, config?: { isolationLevel: string }) => (
        levels.push(config?.isolationLevel ?? 'default'),
        Promise.reject(new Error('stop after BEGIN'))
      ),
    };
    for (const dialect of ['mysql', 'postgres'] as const)
      await expect(fromDrizzle(drizzle, dialect).begin(1000)).rejects.toThrow('stop after BEGIN');
    expect(levels).toEqual(['read committed', 'default']);
  });

  it('a Drizzle database over a driver it cannot reach (no session client) fails the transaction, before any work', async () => {
    const db = { transaction: async (fn: (tx: unknown) => Promise<unknown>) => fn({}) };
    await expect(fromDrizzle(db, 'postgres').begin(1000)).rejects.toThrow(/node-postgres .* and mysql2/);
  });
});
