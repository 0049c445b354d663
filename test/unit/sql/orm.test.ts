import { describe, expect, it } from 'vitest';
import { ConfigurationError } from '../../../src/index.js';
import { fromDrizzle, fromKysely } from '../../../src/sql/index.js';

describe('fromKysely', () => {
  it('refuses Kysely before 0.28 (no startTransaction) or anything else', () => {
    // @ts-expect-error: no startTransaction
    expect(() => fromKysely({ transaction() {} })).toThrow(/Kysely instance \(0.28 or later/);
  });

  it('asks for the dialect when it cannot read it from the instance, and takes it as the second argument', () => {
    const db = { startTransaction: () => ({ execute: async () => Promise.reject(new Error('unused')) }) };
    expect(() => fromKysely(db)).toThrow(ConfigurationError);
    expect(() => fromKysely(db)).toThrow(/second argument, 'postgres' or 'mysql'/);
    expect(fromKysely(db, 'mysql').dialect).toBe('mysql');
  });
});

describe('fromDrizzle', () => {
  it('refuses what has no transaction()', () => {
    // @ts-expect-error: not a Drizzle database
    expect(() => fromDrizzle({})).toThrow(/Drizzle database/);
  });

  it('reads the dialect from Drizzle\'s entity kind, else asks for it', () => {
    const ENTITY_KIND: unique symbol = Symbol.for('drizzle:entityKind');
    class PgDialect {
      static [ENTITY_KIND] = 'PgDialect';
    }
    const db = { dialect: new PgDialect(), transaction: async () => undefined };
    expect(fromDrizzle(db).dialect).toBe('postgres');
    expect(() => fromDrizzle({ transaction: async () => undefined })).toThrow(/second argument/);
    expect(fromDrizzle({ transaction: async () => undefined }, 'postgres').dialect).toBe('postgres');
  });

  it('a Drizzle database over a driver it cannot reach (no session client) fails the transaction, before any work', async () => {
    const db = { transaction: async (fn: (tx: unknown) => Promise<unknown>) => fn({}) };
    await expect(fromDrizzle(db, 'postgres').begin(1000)).rejects.toThrow(/node-postgres .* and mysql2/);
  });
});
