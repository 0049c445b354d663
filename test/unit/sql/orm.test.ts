import { describe, expect, it } from 'vitest';
import { ConfigurationError } from '../../../src/index.js';
import { fromDrizzle, fromKysely } from '../../../src/sql/index.js';

describe('fromKysely', () => {
  it('refuses Kysely before 0.28 (no startTransaction) or anything else', () => {
    // @ts-expect-error: no startTransaction
    expect(() => fromKysely({ transaction() {} })).toThrow(/Kysely instance \(0.28 or later/);
  });

  it('asks for the dialect when it cannot read it from the instance, and takes it as the second argument', () => {
    const unused = async () => Promise.reject(new Error('unused'));
    const db = { startTransaction: () => ({ execute: unused, setIsolationLevel: () => ({ execute: unused }) }) };
    expect(() => fromKysely(db)).toThrow(ConfigurationError);
    expect(() => fromKysely(db)).toThrow(/second argument, 'postgres' or 'mysql'/);
    expect(fromKysely(db, 'mysql').dialect).toBe('mysql');
  });
});

describe('the isolation level of a run on MySQL', () => {
  it('Kysely and Drizzle start the ledger\'s MySQL transaction READ COMMITTED (its claim reads the mark without a gap lock), and leave Postgres\'s as it is', async () => {
    const levels: string[] = [];
    const refuse = async () => Promise.reject(new Error('stop after BEGIN'));
    const kysely = {
      startTransaction: () => ({
        execute: async () => (levels.push('kysely: default'), refuse()),
        setIsolationLevel: (level: string) => ({ execute: async () => (levels.push(`kysely: ${level}`), refuse()) }),
      }),
    };
    const drizzle = { transaction: async (_fn: unknown, config?: { isolationLevel: string }) => (levels.push(`drizzle: ${config?.isolationLevel ?? 'default'}`), refuse()) };
    for (const dialect of ['mysql', 'postgres'] as const) {
      await expect(fromKysely(kysely, dialect).begin(1000)).rejects.toThrow('stop after BEGIN');
      await expect(fromDrizzle(drizzle, dialect).begin(1000)).rejects.toThrow('stop after BEGIN');
    }
    expect(levels).toEqual(['kysely: read committed', 'drizzle: read committed', 'kysely: default', 'drizzle: default']);
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
