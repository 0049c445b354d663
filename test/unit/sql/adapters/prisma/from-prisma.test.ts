import { describe, expect, it } from 'vitest';
import { ConfigurationError } from '../../../../../src/index.js';
import { fromPrisma } from '../../../../../src/sql/index.js';

/** A Prisma client that records what the ledger sends through its interactive transaction. */
function fakePrisma(provider: string) {
  const sent: string[] = [];
  const options: unknown[] = [];
  const ended: string[] = [];
  const tx = {
    $executeRawUnsafe: async (query: string) => (sent.push(`execute ${query}`), 1),
    $queryRawUnsafe: async (query: string) => (sent.push(`query ${query}`), [{ held: 1 }, 'not a row']),
  };
  const prisma = {
    _activeProvider: provider,
    async $transaction(fn: (t: typeof tx) => Promise<unknown>, given?: object) {
      options.push(given);
      try {
        const value = await fn(tx);
        ended.push('COMMIT');
        return value;
      } catch (error) {
        ended.push('ROLLBACK');
        throw error;
      }
    },
  };
  return { prisma, sent, options, ended };
}

describe('fromPrisma', () => {
  it("Postgres: bounds lock waits with SET LOCAL, sends the ledger's reads for rows and the rest for counts, and commits when told", async () => {
    const { prisma, sent, options, ended } = fakePrisma('postgresql');
    const client = fromPrisma(prisma);
    expect(client.dialect).toBe('postgres');
    const session = await client.begin(1500);
    expect(await session.query('SELECT 1 AS held FROM t WHERE ledger_key = $1', ['k:a'])).toEqual({
      rows: [{ held: 1 }],
      affected: 0,
    });
    expect(await session.query('INSERT INTO t (ledger_key) VALUES ($1)', ['k:a'])).toEqual({ rows: [], affected: 1 });
    await session.commit(undefined);
    expect(sent).toEqual([
      'execute SET LOCAL lock_timeout = 1500',
      'query SELECT 1 AS held FROM t WHERE ledger_key = $1',
      'execute INSERT INTO t (ledger_key) VALUES ($1)',
    ]);
    expect(options).toEqual([{ timeout: 900_000 }]);
    expect(ended).toEqual(['COMMIT']);
  });

  it("MySQL: READ COMMITTED, the lock wait set and autocommit off for the run, both restored before the transaction ends; a rollback goes first, then Prisma's ROLLBACK", async () => {
    const { prisma, sent, options, ended } = fakePrisma('mysql');
    const session = await fromPrisma(prisma).begin(1000);
    await session.rollback();
    expect(options).toEqual([{ timeout: 900_000, isolationLevel: 'ReadCommitted' }]);
    expect(sent).toEqual([
      'execute SET @myr_gateway_lwt = @@SESSION.innodb_lock_wait_timeout, @myr_gateway_ac = @@SESSION.autocommit, SESSION innodb_lock_wait_timeout = 1, SESSION autocommit = 0',
      // Turning autocommit back on would commit: the transaction is rolled back before it.
      'execute ROLLBACK',
      'execute SET SESSION innodb_lock_wait_timeout = @myr_gateway_lwt, SESSION autocommit = @myr_gateway_ac',
    ]);
    expect(ended).toEqual(['ROLLBACK']);
  });

  it('a transaction Prisma cannot open rejects begin (nothing runs)', async () => {
    const prisma = {
      _activeProvider: 'postgresql',
      $transaction: async () => Promise.reject(new Error('pool timeout')),
    };
    await expect(fromPrisma(prisma).begin(1000)).rejects.toThrow('pool timeout');
  });

  it('an abandoned run rolls back once the work settles, never commits', async () => {
    const { prisma, ended } = fakePrisma('postgresql');
    const session = await fromPrisma(prisma).begin(1000);
    let settle!: () => void;
    session.abandon(new Promise<void>((resolve) => (settle = resolve)));
    expect(ended).toEqual([]);
    settle();
    await new Promise((resolve) => setTimeout(resolve, 0));
    await new Promise((resolve) => setTimeout(resolve, 0));
    expect(ended).toEqual(['ROLLBACK']);
  });

  it('asks for the dialect when the client does not say, takes it as the second argument, and refuses what is not a PrismaClient', () => {
    const { prisma } = fakePrisma('sqlserver');
    expect(() => fromPrisma(prisma)).toThrow(ConfigurationError);
    expect(() => fromPrisma(prisma)).toThrow(/second argument, 'postgres' or 'mysql'/);
    expect(fromPrisma(prisma, 'mysql').dialect).toBe('mysql');
    // @ts-expect-error: not a Prisma client
    expect(() => fromPrisma({ transaction() {} })).toThrow(/PrismaClient/);
  });
});
