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
  it('bounds lock waits in whole seconds (rounded up) and opens the transaction in the same round trip, and restores the connection\'s own settings before giving it back', async () => {
    const { pool, sent, ended } = fakePool();
    const session = await fromMysql2(pool).begin(1500);
    await session.commit();
    expect(sent).toEqual([
      'SET @myr_gateway_lwt = @@SESSION.innodb_lock_wait_timeout, @myr_gateway_ac = @@SESSION.autocommit, SESSION innodb_lock_wait_timeout = 2, SESSION autocommit = 0',
      'COMMIT',
      'SET SESSION innodb_lock_wait_timeout = @myr_gateway_lwt, SESSION autocommit = @myr_gateway_ac',
    ]);
    expect(ended).toEqual(['released']);
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
