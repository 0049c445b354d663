import { describe, expect, it } from 'vitest';
import { ConfigurationError } from '../../../../../src/index.js';
import { fromMysql2 } from '../../../../../src/sql/index.js';

function fakePool({ refuse = () => undefined }: { refuse?: (text: string) => object | undefined } = {}) {
  const sent: string[] = [];
  const ended: string[] = [];
  const connection = {
    async query(text: string): Promise<[unknown, unknown]> {
      sent.push(text);
      const refused = refuse(text);
      if (refused) throw Object.assign(new Error('refused'), refused);
      return [{ affectedRows: 0 }, undefined];
    },
    release: () => void ended.push('released'),
    destroy: () => void ended.push('destroyed'),
  };
  return { pool: { getConnection: async () => connection }, sent, ended };
}

describe('fromMysql2', () => {
  it("bounds lock waits in whole seconds (rounded up), reads committed, and opens the transaction in the same round trip; commits and restores the connection's own settings in one before giving it back", async () => {
    const { pool, sent, ended } = fakePool();
    const session = await fromMysql2(pool).begin(1500);
    await session.commit({ text: 'SELECT 1 FROM t WHERE ledger_key = ?', params: ['k:a'] });
    expect(sent).toEqual([
      'SET @myr_gateway_lwt = @@SESSION.innodb_lock_wait_timeout, @myr_gateway_ac = @@SESSION.autocommit, @myr_gateway_iso = @@SESSION.transaction_isolation, ' +
        "SESSION innodb_lock_wait_timeout = 2, SESSION transaction_isolation = 'READ-COMMITTED', SESSION autocommit = 0",
      // Turning autocommit on commits: COMMIT and the restore are one round trip. The work sent
      // nothing through tx, so nothing can have ended the transaction: no check.
      "SET SESSION autocommit = 'ON', " +
        'SESSION innodb_lock_wait_timeout = @myr_gateway_lwt, SESSION transaction_isolation = @myr_gateway_iso, SESSION autocommit = @myr_gateway_ac',
    ]);
    expect(ended).toEqual(['released']);
  });

  it("checks the claim within COMMIT's round trip once the work did through tx what may have ended the transaction", async () => {
    type Tx = { query(text: string): Promise<unknown>; ping(): Promise<void>; connection: object };
    const touches: [string, (tx: Tx) => unknown][] = [
      ['a statement that is not a plain read or write', (tx) => tx.query('CALL settle_order(1)')],
      ['two statements in one', (tx) => tx.query('UPDATE orders SET paid = 1; COMMIT')],
      [
        "a statement that failed (a trigger's error may have come from anything)",
        (tx) => tx.query('UPDATE orders SET paid = 1 /* fails */').catch(() => undefined),
      ],
      [
        'a statement still running when the work returned',
        (tx) => void tx.query('UPDATE orders SET paid = 1 /* still running */'),
      ],
      ['a method that is not a statement', (tx) => tx.ping()],
      ['the callback connection underneath', (tx) => tx.connection],
    ];
    for (const [what, touch] of touches) {
      const sent: string[] = [];
      const connection = {
        // Not a callback connection: the ledger's own statements go through `query` too.
        connection: {},
        query(text: string): Promise<[unknown, unknown]> {
          sent.push(text);
          if (text.includes('/* fails */'))
            return Promise.reject(Object.assign(new Error('Duplicate entry'), { errno: 1062 }));
          if (text.includes('/* still running */')) return new Promise(() => undefined);
          return Promise.resolve([{ affectedRows: 0 }, undefined]);
        },
        ping: () => Promise.resolve(),
        release: () => undefined,
        destroy: () => undefined,
      };
      const session = await fromMysql2({ getConnection: async () => connection }, { prepare: false }).begin(1000);
      await touch(session.tx);
      await session.commit({ text: 'SELECT 1 FROM t WHERE ledger_key = ?', params: ['k:a'] });
      expect(sent.at(-1), what).toMatch(
        /^SET SESSION autocommit = IF\(EXISTS\(SELECT 1 FROM t WHERE ledger_key = \?\), 'ON', 'myr_gateway_claim_gone'\), /,
      );
    }
  });

  it('does not check after plain reads and writes through tx that succeeded, and refuses every statement once the run has ended (nothing is sent)', async () => {
    const { pool, sent, ended } = fakePool();
    const session = await fromMysql2(pool, { prepare: false }).begin(1000);
    await session.tx.query('UPDATE orders SET paid = 1 WHERE id = ?');
    await session.tx.query('SELECT paid FROM orders WHERE id = ? FOR UPDATE;');
    await session.commit({ text: 'SELECT 1 FROM t WHERE ledger_key = ?', params: ['k:a'] });
    expect(sent.at(-1)).toMatch(/^SET SESSION autocommit = 'ON', /);
    const before = sent.length;
    await expect(session.tx.query('UPDATE orders SET paid = 2 WHERE id = ?')).rejects.toThrow(
      /after its run had ended/,
    );
    // Given back already: releasing it again would hand another run's connection to the pool.
    session.tx.release();
    expect(sent).toHaveLength(before);
    expect(ended).toEqual(['released']);
  });

  it('on MariaDB 10 (no transaction_isolation) names tx_isolation, from then on', async () => {
    const { pool, sent } = fakePool({
      refuse: (text) => (text.includes('transaction_isolation') ? { errno: 1193 } : undefined),
    });
    const client = fromMysql2(pool);
    await (await client.begin(1000)).rollback();
    await (await client.begin(1000)).commit(undefined);
    expect(sent.filter((text) => text.includes('transaction_isolation'))).toHaveLength(1);
    expect(sent.slice(1)).toEqual([
      expect.stringContaining("SESSION tx_isolation = 'READ-COMMITTED'"),
      'ROLLBACK',
      'SET SESSION innodb_lock_wait_timeout = @myr_gateway_lwt, SESSION tx_isolation = @myr_gateway_iso, SESSION autocommit = @myr_gateway_ac',
      expect.stringContaining("SESSION tx_isolation = 'READ-COMMITTED'"),
      "SET SESSION autocommit = 'ON', SESSION innodb_lock_wait_timeout = @myr_gateway_lwt, SESSION tx_isolation = @myr_gateway_iso, SESSION autocommit = @myr_gateway_ac",
    ]);
  });

  it('a commit whose check finds the claim gone commits nothing: rolls back, restores, gives the connection back, and rejects as rolled back', async () => {
    const { pool, sent, ended } = fakePool({
      refuse: (text) =>
        text.includes('IF(EXISTS')
          ? { errno: 1231, message: "Variable 'autocommit' can't be set to the value of 'myr_gateway_claim_gone'" }
          : undefined,
    });
    const session = await fromMysql2(pool).begin(1000);
    await session.tx.query('ROLLBACK');
    await expect(session.commit({ text: 'SELECT 1', params: [] })).rejects.toMatchObject({ code: '25P02' });
    expect(sent.slice(3)).toEqual([
      'ROLLBACK',
      expect.stringContaining('SET SESSION innodb_lock_wait_timeout = @myr_gateway_lwt'),
    ]);
    expect(ended).toEqual(['released']);
  });

  it("sends the statements of a callback's path prepared (mysql2's execute, cached per connection), the settings' one too, unless told not to", async () => {
    for (const prepare of [undefined, false]) {
      const { pool, sent } = fakePool();
      const executed: string[] = [];
      const connection = await pool.getConnection();
      Object.assign(connection, {
        execute: async (text: string) => (executed.push(text), [{ affectedRows: 1 }, undefined]),
      });
      const session = await fromMysql2(pool, prepare === undefined ? {} : { prepare }).begin(1000);
      expect(await session.query('INSERT IGNORE INTO t (ledger_key) VALUES (?)', ['k:a'])).toEqual({
        rows: [],
        affected: prepare === false ? 0 : 1,
      });
      await session.commit({ text: 'SELECT 1 FROM t WHERE ledger_key = ?', params: ['k:a'] });
      expect(prepare === false ? sent : executed).toEqual([
        expect.stringContaining('SESSION autocommit = 0'),
        'INSERT IGNORE INTO t (ledger_key) VALUES (?)',
        expect.stringContaining("SET SESSION autocommit = 'ON'"),
      ]);
      expect(prepare === false ? executed : sent).toEqual([]);
    }
  });

  it("prepared, still finds out the isolation variable's name on MariaDB 10 (refused at prepare)", async () => {
    const { pool } = fakePool();
    const executed: string[] = [];
    const connection = await pool.getConnection();
    Object.assign(connection, {
      execute: async (text: string) => {
        executed.push(text);
        if (text.includes('transaction_isolation'))
          throw Object.assign(new Error('Unknown system variable'), { errno: 1193 });
        return [{ affectedRows: 0 }, undefined];
      },
    });
    await (await fromMysql2(pool).begin(1000)).commit(undefined);
    expect(executed).toEqual([
      expect.stringContaining('@@SESSION.transaction_isolation'),
      expect.stringContaining("SESSION tx_isolation = 'READ-COMMITTED'"),
      expect.stringContaining('SESSION tx_isolation = @myr_gateway_iso'),
    ]);
  });

  it("sends its own statements through mysql2's callback connection under the promise one (no stack captured per statement), errors with their errno; the work's statements go to the promise connection", async () => {
    const { pool, sent, ended } = fakePool();
    const viaCore: string[] = [];
    const core = {
      query(text: string, _values: unknown[], done: (error: unknown, result?: unknown) => void) {
        viaCore.push(`query ${text}`);
        done(null, { affectedRows: 0 });
      },
      execute(text: string, _values: unknown[], done: (error: unknown, result?: unknown) => void) {
        viaCore.push(`execute ${text}`);
        if (text.includes('IF(EXISTS'))
          done(
            Object.assign(new Error("Variable 'autocommit' can't be set to the value of 'myr_gateway_claim_gone'"), {
              errno: 1231,
            }),
          );
        else done(null, { affectedRows: 2 });
      },
    };
    const connection = await pool.getConnection();
    Object.assign(connection, {
      connection: core,
      execute: () => Promise.reject(new Error('the promise execute was used')),
    });
    const session = await fromMysql2(pool).begin(1000);
    expect(await session.query('INSERT IGNORE INTO t (ledger_key) VALUES (?), (?)', ['k:a', 'm:a'])).toEqual({
      rows: [],
      affected: 2,
    });
    // What the work sends through tx goes to the merchant's own promise connection.
    await session.tx.query('ROLLBACK');
    // The check's refusal is read from the callback's error: nothing commits, the run is rolled back.
    await expect(
      session.commit({ text: 'SELECT 1 FROM t WHERE ledger_key = ?', params: ['k:a'] }),
    ).rejects.toMatchObject({ code: '25P02' });
    expect(viaCore).toEqual([
      expect.stringMatching(/^execute SET @myr_gateway_lwt/),
      'execute INSERT IGNORE INTO t (ledger_key) VALUES (?), (?)',
      expect.stringMatching(/^execute SET SESSION autocommit = IF\(EXISTS/),
      'query ROLLBACK',
      expect.stringMatching(/^query SET SESSION innodb_lock_wait_timeout = @myr_gateway_lwt/),
    ]);
    expect(sent).toEqual(['ROLLBACK']);
    expect(ended).toEqual(['released']);
  });

  it("a rollback restores the connection's own settings before giving it back", async () => {
    const { pool, sent, ended } = fakePool();
    const session = await fromMysql2(pool).begin(1000);
    await session.rollback();
    expect(sent.slice(1)).toEqual([
      'ROLLBACK',
      'SET SESSION innodb_lock_wait_timeout = @myr_gateway_lwt, SESSION transaction_isolation = @myr_gateway_iso, SESSION autocommit = @myr_gateway_ac',
    ]);
    expect(ended).toEqual(['released']);
  });

  it("a rollback whose restore of the connection's settings fails closes the connection instead of giving it back with autocommit off", async () => {
    const { pool, sent, ended } = fakePool({
      refuse: (text) =>
        text.startsWith('SET SESSION innodb_lock_wait_timeout = @myr_gateway_lwt') ? { errno: 1317 } : undefined,
    });
    const session = await fromMysql2(pool).begin(1000);
    await session.rollback();
    expect(sent.slice(1)).toEqual([
      'ROLLBACK',
      expect.stringContaining('SET SESSION innodb_lock_wait_timeout = @myr_gateway_lwt'),
    ]);
    expect(ended).toEqual(['destroyed']);
  });

  it('a failed commit destroys the connection (outcome unknown) and rejects', async () => {
    const { pool, sent, ended } = fakePool();
    const session = await fromMysql2(pool).begin(1000);
    session.tx.query = async (text: string) => (sent.push(text), Promise.reject(new Error('connection lost')));
    await expect(session.commit(undefined)).rejects.toThrow('connection lost');
    expect(ended).toEqual(['destroyed']);
  });

  it('abandoning a transaction destroys its connection (the server rolls back); it never returns to the pool', async () => {
    const { pool, ended } = fakePool();
    const session = await fromMysql2(pool).begin(1000);
    session.abandon(new Promise(() => undefined));
    await session.rollback();
    expect(ended).toEqual(['destroyed']);
  });

  it('tx refuses a query once the run ended, and its release() leaves the connection to the ledger', async () => {
    const { pool, sent, ended } = fakePool();
    const session = await fromMysql2(pool).begin(1000);
    session.tx.release();
    expect(ended).toEqual([]);
    await session.tx.query('INSERT INTO orders VALUES (1)');
    await session.rollback();
    await expect(session.tx.query('INSERT INTO orders VALUES (2)')).rejects.toThrow(/after its run had ended/);
    expect(sent.filter((text) => text.startsWith('INSERT'))).toEqual(['INSERT INTO orders VALUES (1)']);
    expect(ended).toEqual(['released']);
  });

  it('a deadlock the work met through tx (and caught) makes the commit roll back without sending it; a lock wait timeout makes its check ask whether the server rolled back on one', async () => {
    const deadlocked = fakePool({ refuse: (text) => (text === 'UPDATE stock' ? { errno: 1213 } : undefined) });
    const session = await fromMysql2(deadlocked.pool).begin(1000);
    await expect(session.tx.query('UPDATE stock')).rejects.toMatchObject({ errno: 1213 });
    await expect(session.commit({ text: 'SELECT 1', params: [] })).rejects.toMatchObject({ code: '25P02' });
    expect(deadlocked.sent.slice(2)).toEqual([
      'ROLLBACK',
      expect.stringContaining('SET SESSION innodb_lock_wait_timeout = @myr_gateway_lwt'),
    ]);

    const timedOut = fakePool({ refuse: (text) => (text === 'UPDATE stock' ? { errno: 1205 } : undefined) });
    const waited = await fromMysql2(timedOut.pool).begin(1000);
    await expect(waited.tx.query('UPDATE stock')).rejects.toMatchObject({ errno: 1205 });
    await waited.commit({ text: 'SELECT 1', params: [] });
    expect(timedOut.sent.at(-1)).toContain(
      "IF(EXISTS(SELECT 1) AND @@GLOBAL.innodb_rollback_on_timeout = 0, 'ON', 'myr_gateway_claim_gone')",
    );
  });

  it('refuses a callback pool or anything else, and says how to get a promise pool', () => {
    // @ts-expect-error: no getConnection returning a promise connection
    expect(() => fromMysql2({ query() {} })).toThrow(ConfigurationError);
    // @ts-expect-error: no getConnection returning a promise connection
    expect(() => fromMysql2({ query() {} })).toThrow(/pool.promise\(\)/);
  });
});
