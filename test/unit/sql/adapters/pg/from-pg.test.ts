import { EventEmitter } from 'node:events';
import { describe, expect, it } from 'vitest';
import { ConfigurationError } from '../../../../../src/index.js';
import { fromPg } from '../../../../../src/sql/index.js';

/**
 * node-postgres's answer to `text`: a query of several statements (the check and COMMIT) answers
 * one result per statement, an array, COMMIT's last.
 */
function answerOf(text: string, command: string, rowCount = 0) {
  const result = { rows: [], rowCount, command };
  if (!text.includes('; COMMIT')) return result;
  return Object.assign([{ rows: [{ held: true }], rowCount: 1, command: 'SELECT' }, result], result);
}

/** A node-postgres pool whose one client records what it is sent and how it is given back. */
function fakePool(answers: Record<string, { command: string; rowCount?: number }> = {}) {
  const sent: string[] = [];
  const released: unknown[] = [];
  const named: unknown[] = [];
  const client = {
    async query(query: string | { name: string; text: string; values: unknown[] }) {
      if (typeof query !== 'string') named.push(query);
      const text = typeof query === 'string' ? query : query.text;
      sent.push(text);
      const statement = text.includes('; COMMIT') ? 'COMMIT' : text;
      const answer = answers[statement] ?? { command: statement.split(' ')[0] ?? '' };
      return answerOf(text, answer.command, answer.rowCount);
    },
    release(destroy?: Error | boolean) {
      released.push(destroy ?? 'back to the pool');
    },
  };
  return { pool: { connect: async () => client }, sent, released, named };
}

describe('fromPg', () => {
  it('opens each transaction with its lock_timeout in one round trip', async () => {
    const { pool, sent } = fakePool();
    await fromPg(pool).begin(750);
    expect(sent).toEqual(["BEGIN; SET LOCAL lock_timeout = 750; SET LOCAL myr_gateway.ledger_tx = 'on'"]);
  });

  it("opens a ledger run BEGIN first on a client whose connection writes no protocol messages (pg.native, a pool's double)", async () => {
    const { pool, sent } = fakePool({ 'INSERT INTO t (k) VALUES ($1)': { command: 'INSERT', rowCount: 1 } });
    const session = await fromPg(pool).begin(750, true);
    expect(await session.query('INSERT INTO t (k) VALUES ($1)', ['a'])).toEqual({ rows: [], affected: 1 });
    await session.commit(undefined);
    expect(sent).toEqual([
      "BEGIN; SET LOCAL lock_timeout = 750; SET LOCAL myr_gateway.ledger_tx = 'on'",
      'INSERT INTO t (k) VALUES ($1)',
      'COMMIT',
    ]);
  });

  it("prepares the run's statements once per connection under a name of their text, and BEGIN never", async () => {
    const { pool, named } = fakePool();
    const session = await fromPg(pool).begin(1000);
    await session.query('SELECT 1 FROM t WHERE k = $1', ['a']);
    await session.query('SELECT 1 FROM t WHERE k = $1', ['b']);
    await session.query('SELECT 2 FROM t WHERE k = $1', ['c']);
    const names = named.map((query) => (query as { name: string }).name);
    expect(names).toHaveLength(3);
    expect(names[0]).toMatch(/^myr_gateway_[0-9a-f]{24}$/);
    expect(names[1]).toBe(names[0]);
    expect(names[2]).not.toBe(names[0]);
  });

  it('with prepare: false (PgBouncer before 1.21) sends every statement unnamed', async () => {
    const { pool, named, sent } = fakePool();
    const session = await fromPg(pool, { prepare: false }).begin(1000);
    await session.query('SELECT 1 FROM t WHERE k = $1', ['a']);
    expect(named).toEqual([]);
    expect(sent).toContain('SELECT 1 FROM t WHERE k = $1');
  });

  it('refuses a prepare option that is not a boolean', () => {
    const { pool } = fakePool();
    // @ts-expect-error: a string
    expect(() => fromPg(pool, { prepare: 'no' })).toThrow(/prepare must be true or false/);
  });

  it('commits without the check after plain reads and writes through tx that were answered, and with it after anything that may have ended the transaction', async () => {
    const cases: [string, (tx: { query(text: string): Promise<unknown>; connection?: unknown }) => unknown, boolean][] =
      [
        ['nothing', () => undefined, false],
        [
          'plain writes, answered',
          async (tx) => {
            await tx.query('UPDATE orders SET paid = true WHERE id = $1');
            await tx.query('SELECT 1');
          },
          false,
        ],
        ['a ROLLBACK', (tx) => tx.query('ROLLBACK'), true],
        ['ROLLBACK then BEGIN in one query', (tx) => tx.query('ROLLBACK; BEGIN'), true],
        ['a write still running', (tx) => void tx.query('UPDATE orders SET paid = true /* still running */'), true],
        ['the connection underneath', (tx) => tx.connection, true],
      ];
    for (const [what, work, checked] of cases) {
      const { pool, sent } = fakePool();
      const client = await pool.connect();
      const query = client.query.bind(client);
      Object.assign(client, {
        connection: {},
        query: (text: string) =>
          text.includes('still running') ? (sent.push(text), new Promise(() => undefined)) : query(text),
      });
      const session = await fromPg(pool).begin(1000);
      await work(session.tx);
      await session.commit(undefined);
      expect(sent.at(-1), what).toEqual(
        checked
          ? expect.stringMatching(
              /^SELECT CASE WHEN current_setting\('myr_gateway.ledger_tx', true\) = 'on'.*; COMMIT$/,
            )
          : 'COMMIT',
      );
    }
  });

  it("hears a session's FATAL that comes in the same read as the client's hand-over (pg-pool's callback form): no uncaught error", async () => {
    const client = Object.assign(new EventEmitter(), {
      query: (text: string) => Promise.resolve(answerOf(text, text.split(' ')[0] ?? '')),
      release: () => undefined,
    });
    const fatal = Object.assign(new Error('terminating connection due to administrator command'), { code: '57P01' });
    // pg-pool calls a connect callback as the client becomes ready, inside the network read that
    // may carry a FATAL right after; its promise form resumes the caller only after that read.
    const read = (handOver: () => void) =>
      setImmediate(() => {
        handOver();
        client.emit('error', fatal);
      });
    const pool = {
      connect(callback?: (error: Error | undefined, given: typeof client) => void): Promise<typeof client> | undefined {
        if (callback) return void read(() => callback(undefined, client));
        return new Promise((resolve) => read(() => resolve(client)));
      },
    };
    const session = await fromPg(pool as { connect(): Promise<typeof client> }).begin(1000);
    expect(client.listenerCount('error')).toBe(1);
    await session.rollback();
  });

  it('a COMMIT that Postgres answers with ROLLBACK (a failed transaction) is not a commit', async () => {
    const { pool } = fakePool({ COMMIT: { command: 'ROLLBACK' } });
    const session = await fromPg(pool).begin(1000);
    await expect(session.commit(undefined)).rejects.toThrow(/COMMIT answered ROLLBACK/);
  });

  it('abandoning a transaction destroys its connection at once (the server rolls back), and only once', async () => {
    const { pool, released } = fakePool();
    const session = await fromPg(pool).begin(1000);
    session.abandon(new Promise(() => undefined));
    await session.rollback();
    expect(released).toHaveLength(1);
    expect(released[0]).toBeInstanceOf(Error);
  });

  it('tx refuses a query once the run ended (promise and callback forms), and its release() leaves the client to the ledger', async () => {
    const { pool, sent, released } = fakePool();
    const session = await fromPg(pool).begin(1000);
    session.tx.release();
    expect(released).toEqual([]);
    await session.tx.query('INSERT INTO orders VALUES (1)');
    await session.commit(undefined);
    await expect(session.tx.query('INSERT INTO orders VALUES (2)')).rejects.toThrow(/after its run had ended/);
    // node-postgres's callback form, which the fake's type does not declare.
    const answered = await new Promise(
      (resolve) =>
        void Reflect.apply(Reflect.get(session.tx, 'query') as (...args: unknown[]) => unknown, undefined, [
          'INSERT INTO orders VALUES (3)',
          [],
          resolve,
        ]),
    );
    expect(answered).toBeInstanceOf(Error);
    expect(sent.filter((text) => text.startsWith('INSERT'))).toEqual(['INSERT INTO orders VALUES (1)']);
    expect(released).toEqual(['back to the pool']);
  });

  it('a failed ROLLBACK destroys the connection instead of giving it back mid-transaction', async () => {
    const { pool, released } = fakePool();
    const session = await fromPg(pool).begin(1000);
    session.tx.query = async () => Promise.reject(new Error('connection lost'));
    await session.rollback();
    expect(released[0]).toBeInstanceOf(Error);
  });

  it.each([
    [
      'a postgres.js instance',
      Object.assign(() => undefined, { connect: async () => undefined, unsafe: () => undefined }),
    ],
    ['nothing', undefined],
    ['a string', 'postgres://localhost'],
  ])('refuses %s with a ConfigurationError naming the client it takes', (_, value) => {
    // @ts-expect-error: not a node-postgres Pool
    expect(() => fromPg(value)).toThrow(ConfigurationError);
    // @ts-expect-error: not a node-postgres Pool
    expect(() => fromPg(value)).toThrow(/node-postgres Pool/);
  });
});

describe('fromPg and a connection that dies while the ledger holds it', () => {
  it("listens for the client's error event while it is checked out (no uncaught error), and stops when it goes back", async () => {
    const { EventEmitter } = await import('node:events');
    const client = Object.assign(new EventEmitter(), {
      query: async (text: string) => answerOf(text, text.includes('; COMMIT') ? 'COMMIT' : (text.split(' ')[0] ?? '')),
      release: () => undefined,
    });
    const session = await fromPg({ connect: async () => client }).begin(1000);
    expect(() => client.emit('error', new Error('Connection terminated unexpectedly'))).not.toThrow();
    await session.commit(undefined);
    expect(client.listenerCount('error')).toBe(0);
  });
});
