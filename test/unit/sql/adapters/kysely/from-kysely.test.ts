import { describe, expect, it } from 'vitest';
import { ConfigurationError } from '../../../../../src/index.js';
import { fromKysely } from '../../../../../src/sql/index.js';

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

  it("starts the ledger's MySQL transaction READ COMMITTED (its claim reads the mark without a gap lock), and leaves Postgres's as it is", async () => {
    const levels: string[] = [];
    const refuse = async () => Promise.reject(new Error('stop after BEGIN'));
    const kysely = {
      startTransaction: () => ({
        execute: async () => (levels.push('default'), refuse()),
        setIsolationLevel: (level: string) => ({ execute: async () => (levels.push(level), refuse()) }),
      }),
    };
    for (const dialect of ['mysql', 'postgres'] as const)
      await expect(fromKysely(kysely, dialect).begin(1000)).rejects.toThrow('stop after BEGIN');
    expect(levels).toEqual(['read committed', 'default']);
  });

  it('a COMMIT the server refuses (a deferred constraint, a deadlock) rejects, and the transaction is rolled back so Kysely gives its connection back', async () => {
    const sent: string[] = [];
    const refused = Object.assign(new Error('insert or update violates foreign key constraint'), { code: '23503' });
    const trx = {
      executeQuery: async (query: { sql: string }) => (sent.push(query.sql), { rows: [] }),
      commit: () => ({ execute: async () => (sent.push('COMMIT'), Promise.reject(refused)) }),
      rollback: () => ({ execute: async () => void sent.push('ROLLBACK') }),
    };
    const db = {
      startTransaction: () => ({ execute: async () => trx, setIsolationLevel: () => ({ execute: async () => trx }) }),
    };
    const session = await fromKysely(db, 'postgres').begin(1500);
    await expect(session.commit(undefined)).rejects.toBe(refused);
    expect(sent).toEqual(['SET LOCAL lock_timeout = 1500', 'COMMIT', 'ROLLBACK']);
  });
});
