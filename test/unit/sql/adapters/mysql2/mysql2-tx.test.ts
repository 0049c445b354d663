import { inspect } from 'node:util';
import { describe, expect, it } from 'vitest';
import { workTx } from '../../../../../src/sql/adapters/mysql2/mysql2-tx.js';

describe('workTx', () => {
  function connection() {
    const sent: string[] = [];
    const settles: ((fail: boolean) => void)[] = [];
    const target = {
      threadId: 7,
      connection: { query() {}, escape: (value: string) => `'${value}'` },
      // As mysql2's promise connection: passed on to the callback connection underneath.
      escape(value: string): string {
        return this.connection.escape(value);
      },
      query(statement: string | { sql: string; values?: unknown }, values?: unknown): Promise<string> {
        void values;
        const text = typeof statement === 'string' ? statement : statement.sql;
        sent.push(text);
        return new Promise((resolve, reject) =>
          settles.push((fail) => (fail ? reject(new Error('failed')) : resolve(text))),
        );
      },
      execute(text: string): Promise<string> {
        return this.query(text);
      },
      beginTransaction: () => Promise.resolve('begun'),
      ping: () => Promise.resolve('pong'),
      commit: () => Promise.resolve(void sent.push('COMMIT')),
      rollback: () => Promise.resolve(void sent.push('ROLLBACK')),
      changeUser: (options: object) => Promise.resolve(void sent.push(`changeUser ${JSON.stringify(options)}`)),
      pause: () => undefined,
      prepare: (text: string) =>
        Promise.resolve({ id: 3, execute: () => Promise.resolve(void sent.push(`executed ${text}`)) }),
      release: () => void sent.push('released'),
      // mysql2's end() on a pooled connection releases it; `await using` calls [Symbol.asyncDispose].
      end: () => Promise.resolve(void sent.push('released')),
      [Symbol.asyncDispose]: () => Promise.resolve(void sent.push('released')),
    };
    return { target, sent, settle: (fail = false) => settles.shift()?.(fail) };
  }

  it('passes statements and their answers through untouched, and counts until they settle', async () => {
    const { target, sent, settle } = connection();
    const work = workTx(target);
    const answer = work.tx.query('UPDATE orders SET paid = 1');
    expect(work.mayHaveEnded()).toBe(true); // still running: it would run before COMMIT
    settle();
    await expect(answer).resolves.toBe('UPDATE orders SET paid = 1');
    expect(work.mayHaveEnded()).toBe(false);
    expect(sent).toEqual(['UPDATE orders SET paid = 1']);
    expect([work.tx.threadId, work.tx.escape('a')]).toEqual([7, "'a'"]);
    expect(work.mayHaveEnded()).toBe(false);
  });

  it('notes a failed statement, the merchant still getting its rejection', async () => {
    const { target, settle } = connection();
    const work = workTx(target);
    const answer = work.tx.execute('UPDATE orders SET paid = 1');
    settle(true);
    await expect(answer).rejects.toThrow('failed');
    expect(work.mayHaveEnded()).toBe(true);
  });

  it('notes any other method, and a reach for the callback connection underneath', async () => {
    for (const touch of [
      (tx: ReturnType<typeof connection>['target']) => tx.ping(),
      (tx: ReturnType<typeof connection>['target']) => tx.connection,
      (tx: object) => Object.getOwnPropertyDescriptor(tx, 'connection'),
    ]) {
      const work = workTx(connection().target);
      await touch(work.tx);
      expect(work.mayHaveEnded()).toBe(true);
    }
  });

  it('notes a prepared statement, which executes while the run lasts and is refused after it', async () => {
    const { target, sent } = connection();
    const work = workTx(target);
    const statement = await work.tx.prepare('UPDATE orders SET paid = ?');
    expect(work.mayHaveEnded()).toBe(true);
    await statement.execute();
    work.end();
    await expect(statement.execute()).rejects.toThrow(/after its run had ended/);
    expect([sent, statement.id]).toEqual([['executed UPDATE orders SET paid = ?'], 3]);
  });

  it('on a connection with multipleStatements, notes a query with values (one may be raw SQL adding a statement), not one without, nor execute', async () => {
    const tries: [(tx: ReturnType<typeof connection>['target']) => Promise<unknown>, boolean][] = [
      [(tx) => tx.query('UPDATE orders SET paid = 1'), false],
      [(tx) => tx.execute('UPDATE orders SET paid = 1'), false],
      [(tx) => tx.query('UPDATE orders SET paid = ?', [1]), true],
      [(tx) => tx.query({ sql: 'UPDATE orders SET paid = ?', values: [1] }), true],
    ];
    for (const [send, noted] of tries) {
      const { target, settle } = connection();
      const work = workTx(Object.assign(target, { config: { multipleStatements: true } }));
      const answer = send(work.tx);
      settle();
      await answer;
      expect(work.mayHaveEnded()).toBe(noted);
    }
  });

  it("refuses to begin, commit or roll back the ledger's transaction, or change its user: a ConfigurationError, nothing sent", async () => {
    const { target, sent } = connection();
    const work = workTx(target);
    const { tx } = work;
    for (const control of [
      () => tx.beginTransaction(),
      () => tx.commit(),
      () => tx.rollback(),
      () => tx.changeUser({ user: 'other' }),
    ]) {
      await expect(control()).rejects.toMatchObject({
        name: 'ConfigurationError',
        code: 'INVALID_CONFIGURATION',
        field: 'tx',
      });
    }
    expect(sent).toEqual([]);
  });

  it('does not let the work give the connection back (release, end, await using): the ledger does, when the run ends', async () => {
    const { target, sent } = connection();
    const work = workTx(target);
    work.tx.release();
    await work.tx.end();
    await work.tx[Symbol.asyncDispose]();
    expect(sent).toEqual([]);
    expect(work.mayHaveEnded()).toBe(false);
  });

  it('after the run, refuses statements and methods without sending, and does not let the connection go again', async () => {
    const { target, sent } = connection();
    const work = workTx(target);
    work.end();
    await expect(work.tx.query('UPDATE orders SET paid = 1')).rejects.toThrow(/after its run had ended/);
    await expect(work.tx.beginTransaction()).rejects.toThrow(/after its run had ended/);
    await expect(work.tx.ping()).rejects.toThrow(/after its run had ended/);
    // A method that answers no promise does nothing: a rejection nobody awaits would end the process.
    expect(work.tx.pause()).toBeUndefined();
    work.tx.release();
    await work.tx.end();
    await work.tx[Symbol.asyncDispose]();
    expect(() => work.tx.connection).toThrow(/after its run had ended/);
    expect(Object.getOwnPropertyDescriptor(work.tx, 'connection')).toMatchObject({ value: undefined });
    expect(Object.keys(work.tx)).toContain('connection');
    expect(work.tx.escape('a')).toBe("'a'");
    expect(sent).toEqual([]);
  });

  it('shows which connection it is in util.inspect and JSON, never its config (the password), without counting as a reach underneath', () => {
    const { target } = connection();
    const work = workTx(Object.assign(target, { config: { user: 'shop', password: 'db-secret' } }));
    expect([inspect(work.tx), inspect({ tx: work.tx }, { depth: null }), JSON.stringify(work.tx)]).toEqual([
      'MysqlTx { threadId: 7 }',
      '{ tx: MysqlTx { threadId: 7 } }',
      '{"threadId":7}',
    ]);
    expect(work.mayHaveEnded()).toBe(false);
    // The work reads its own config as before.
    expect(work.tx.config.password).toBe('db-secret');
    work.end();
    expect(inspect(work.tx)).toBe('MysqlTx { threadId: 7 }');
  });
});
