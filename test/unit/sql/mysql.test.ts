import { describe, expect, it } from 'vitest';
import { ConfigurationError } from '../../../src/index.js';
import { fromMysql2 } from '../../../src/sql/index.js';

function fakePool() {
  const sent: string[] = [];
  const ended: string[] = [];
  const connection = {
    async query(text: string): Promise<[unknown, unknown]> {
      sent.push(text);
      return [{ affectedRows: 0 }, undefined];
    },
    release: () => void ended.push('released'),
    destroy: () => void ended.push('destroyed'),
  };
  return { pool: { getConnection: async () => connection }, sent, ended };
}

describe('fromMysql2', () => {
  it('bounds lock waits in whole seconds (rounded up) and opens the transaction in the same round trip, and commits and restores the connection\'s own settings in one before giving it back', async () => {
    const { pool, sent, ended } = fakePool();
    const session = await fromMysql2(pool).begin(1500);
    await session.commit();
    expect(sent).toEqual([
      'SET @myr_gateway_lwt = @@SESSION.innodb_lock_wait_timeout, @myr_gateway_ac = @@SESSION.autocommit, SESSION innodb_lock_wait_timeout = 2, SESSION autocommit = 0',
      // Turning autocommit on commits: COMMIT and the restore are one round trip.
      'SET SESSION autocommit = 1, SESSION innodb_lock_wait_timeout = @myr_gateway_lwt, SESSION autocommit = @myr_gateway_ac',
    ]);
    expect(ended).toEqual(['released']);
  });

  it('a rollback restores the connection\'s own settings before giving it back', async () => {
    const { pool, sent, ended } = fakePool();
    const session = await fromMysql2(pool).begin(1000);
    await session.rollback();
    expect(sent.slice(1)).toEqual(['ROLLBACK', 'SET SESSION innodb_lock_wait_timeout = @myr_gateway_lwt, SESSION autocommit = @myr_gateway_ac']);
    expect(ended).toEqual(['released']);
  });

  it('a failed commit destroys the connection (outcome unknown) and rejects', async () => {
    const { pool, sent, ended } = fakePool();
    const session = await fromMysql2(pool).begin(1000);
    session.tx.query = async (text: string) => (sent.push(text), Promise.reject(new Error('connection lost')));
    await expect(session.commit()).rejects.toThrow('connection lost');
    expect(ended).toEqual(['destroyed']);
  });

  it('abandoning a transaction destroys its connection (the server rolls back); it never returns to the pool', async () => {
    const { pool, ended } = fakePool();
    const session = await fromMysql2(pool).begin(1000);
    session.abandon(new Promise(() => undefined));
    await session.rollback();
    expect(ended).toEqual(['destroyed']);
  });

  it('refuses a callback pool or anything else, and says how to get a promise pool', () => {
    // @ts-expect-error: no getConnection returning a promise connection
    expect(() => fromMysql2({ query() {} })).toThrow(ConfigurationError);
    // @ts-expect-error: no getConnection returning a promise connection
    expect(() => fromMysql2({ query() {} })).toThrow(/pool.promise\(\)/);
  });
});
