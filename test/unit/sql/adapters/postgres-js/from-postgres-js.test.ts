import { describe, expect, it } from 'vitest';
import { fromPostgresJs } from '../../../../../src/sql/index.js';

describe('fromPostgresJs', () => {
  it('refuses what has no reserve() (postgres.js before 3.4, or another client)', () => {
    // @ts-expect-error: a node-postgres Pool
    expect(() => fromPostgresJs({ connect: async () => undefined })).toThrow(
      /postgres.js instance \(postgres\(url\), version 3.4 or later\)/,
    );
  });

  it("asks postgres.js to prepare the run's statements (its own prepare: false still wins), never BEGIN", async () => {
    const asked: unknown[] = [];
    const reserved = {
      unsafe: (text: string, _params?: never[], options?: { prepare?: boolean }) => (
        asked.push([text, options?.prepare]),
        Promise.resolve(Object.assign([], { count: 0, command: text }))
      ),
      release: () => undefined,
    };
    const sql = Object.assign(() => undefined, { reserve: async () => reserved });
    const session = await fromPostgresJs(sql).begin(500);
    await session.query('SELECT 1 FROM t WHERE k = $1', ['a']);
    expect(asked).toEqual([
      ["BEGIN; SET LOCAL lock_timeout = 500; SET LOCAL myr_gateway.ledger_tx = 'on'", undefined],
      ['SELECT 1 FROM t WHERE k = $1', true],
    ]);
  });

  /** A reserved postgres.js connection that records what is sent; `open` says whether the ledger's mark is still set. */
  const reservedConnection = (open: () => boolean) => {
    const sent: string[] = [];
    let released = 0;
    const reserved = {
      unsafe: (text: string) => {
        sent.push(text);
        // A simple query of several statements answers the rows of its SELECT and the tag of its
        // last; the check fails (22P02) where the mark is gone, and Postgres skips the COMMIT.
        const check = text.startsWith('SELECT CASE WHEN current_setting');
        if (check && !open())
          return Promise.reject(
            Object.assign(new Error('invalid input syntax for type boolean'), { code: '22P02', severity: 'ERROR' }),
          );
        return Promise.resolve(
          Object.assign(check ? [{ held: true }] : [], { count: 0, command: text.split('; ').at(-1)?.split(' ')[0] }),
        );
      },
      release: () => void (released += 1),
    };
    return { sent, released: () => released, sql: Object.assign(() => undefined, { reserve: async () => reserved }) };
  };

  it('sends BEGIN with SET LOCAL lock_timeout, then the check with COMMIT, each one query on the reserved connection, and gives it back after COMMIT', async () => {
    const connection = reservedConnection(() => true);
    const session = await fromPostgresJs(connection.sql).begin(500);
    await session.commit(undefined);
    expect(connection.sent).toEqual([
      "BEGIN; SET LOCAL lock_timeout = 500; SET LOCAL myr_gateway.ledger_tx = 'on'",
      expect.stringMatching(
        /^SELECT CASE WHEN current_setting\('myr_gateway\.ledger_tx', true\) = 'on' THEN true ELSE .*; COMMIT$/,
      ),
    ]);
    expect(connection.released()).toBe(1);
  });

  it("sends the claim right behind BEGIN, before BEGIN's answer (postgres.js pipelines them: one round trip), and answers BEGIN's failure first", async () => {
    const sent: string[] = [];
    let answerBegin!: (value: unknown) => void;
    let failBegin!: (error: unknown) => void;
    const reserved = {
      unsafe: (text: string) => {
        sent.push(text);
        if (text.startsWith('BEGIN'))
          return new Promise((resolve, reject) => ((answerBegin = resolve), (failBegin = reject)));
        return Promise.resolve(Object.assign([], { count: 1, command: 'INSERT' }));
      },
      release: () => undefined,
    };
    const sql = Object.assign(() => undefined, { reserve: async () => reserved });
    const session = await fromPostgresJs(sql).begin(500);
    const claimed = session.query('INSERT INTO t VALUES ($1)', ['k']);
    expect(sent).toEqual([
      "BEGIN; SET LOCAL lock_timeout = 500; SET LOCAL myr_gateway.ledger_tx = 'on'",
      'INSERT INTO t VALUES ($1)',
    ]);
    answerBegin(Object.assign([], { count: 0, command: 'SET' }));
    await expect(claimed).resolves.toEqual({ rows: [], affected: 1 });

    const failing = await fromPostgresJs(sql).begin(500);
    const refused = failing.query('INSERT INTO t VALUES ($1)', ['k']);
    failBegin(
      Object.assign(new Error('invalid value for parameter "lock_timeout"'), { code: '22023', severity: 'ERROR' }),
    );
    await expect(refused).rejects.toMatchObject({ code: '22023' });
  });

  it('a transaction a failed statement aborted (the check fails, COMMIT is skipped): rolled back, the failure answered, the connection given back', async () => {
    const sent: string[] = [];
    let released = 0;
    const reserved = {
      unsafe: (text: string) => {
        sent.push(text);
        if (text.startsWith('SELECT CASE WHEN current_setting'))
          return Promise.reject(
            Object.assign(new Error('current transaction is aborted'), { code: '25P02', severity: 'ERROR' }),
          );
        return Promise.resolve(Object.assign([], { count: 0, command: 'SET' }));
      },
      release: () => void (released += 1),
    };
    const session = await fromPostgresJs(Object.assign(() => undefined, { reserve: async () => reserved })).begin(500);
    await expect(session.commit(undefined)).rejects.toMatchObject({ code: '25P02' });
    expect(sent.at(-1)).toBe('ROLLBACK');
    expect(released).toBe(1);
  });

  it('refuses to call a COMMIT done when the work had ended the transaction itself (its SET LOCAL mark is gone): rolled back', async () => {
    const connection = reservedConnection(() => false);
    const session = await fromPostgresJs(connection.sql).begin(500);
    await expect(session.commit(undefined)).rejects.toThrow(/no transaction in progress/);
    expect(connection.sent.at(-1)).toBe('ROLLBACK');
    expect(connection.released()).toBe(1);
  });
});

describe('fromPostgresJs and a connection postgres.js has closed (the server went away)', () => {
  // postgres.js takes a closed connection back into its pool by itself; a statement sent on it
  // afterwards never settles (or throws outside any promise), and giving it back would hand the
  // dead connection to the next caller.
  const closedAfter = (statements: number) => {
    const sent: string[] = [];
    let released = 0;
    const reserved = {
      unsafe: (text: string) => {
        sent.push(text);
        if (sent.length > statements)
          return Promise.reject(
            Object.assign(new Error('write CONNECTION_CLOSED 127.0.0.1:5432'), { code: 'CONNECTION_CLOSED' }),
          );
        return Promise.resolve(Object.assign([], { count: 0, command: text.split(' ')[0] }));
      },
      release: () => void (released += 1),
    };
    return { sent, released: () => released, sql: Object.assign(() => undefined, { reserve: async () => reserved }) };
  };

  it('BEGIN failed on a closed connection: the claim behind it answers so, the rollback sends nothing, the connection is not given back', async () => {
    const connection = closedAfter(0);
    const session = await fromPostgresJs(connection.sql).begin(500);
    const claim = session.query('INSERT INTO t VALUES ($1)', ['k']);
    await expect(claim).rejects.toMatchObject({ code: 'CONNECTION_CLOSED' });
    await session.rollback(await claim.catch((error: unknown) => error));
    expect(connection.sent).not.toContain('ROLLBACK');
    expect(connection.released()).toBe(0);
  });

  it('a claim that met the closed connection: the rollback sends nothing more and keeps the connection', async () => {
    const connection = closedAfter(1);
    const session = await fromPostgresJs(connection.sql).begin(500);
    await expect(session.query('INSERT INTO t VALUES ($1)', ['k'])).rejects.toMatchObject({
      code: 'CONNECTION_CLOSED',
    });
    await session.rollback();
    expect(connection.sent.at(-1)).toBe('INSERT INTO t VALUES ($1)');
    expect(connection.released()).toBe(0);
  });

  it("the work's own statement met it (a socket error, or the server's FATAL): neither a rollback nor an abandoned work sends on it", async () => {
    for (const cause of [
      Object.assign(new Error('read ECONNRESET'), { code: 'ECONNRESET', syscall: 'read' }),
      Object.assign(new Error('terminating connection due to administrator command'), {
        code: '57P01',
        severity: 'FATAL',
      }),
    ]) {
      const rolledBack = closedAfter(99);
      await (await fromPostgresJs(rolledBack.sql).begin(500)).rollback(cause);
      const abandoned = closedAfter(99);
      (await fromPostgresJs(abandoned.sql).begin(500)).abandon(Promise.resolve(cause));
      await new Promise((resolve) => setImmediate(resolve));
      for (const connection of [rolledBack, abandoned]) {
        expect(connection.sent).not.toContain('ROLLBACK');
        expect(connection.released()).toBe(0);
      }
    }
  });

  it('a statement error on a live connection still rolls back and gives the connection back', async () => {
    const connection = closedAfter(99);
    await (
      await fromPostgresJs(connection.sql).begin(500)
    ).rollback(Object.assign(new Error('duplicate key'), { code: '23505', severity: 'ERROR' }));
    expect(connection.sent.at(-1)).toBe('ROLLBACK');
    expect(connection.released()).toBe(1);
  });
});

/**
 * A reserved connection that hands itself over to `onexecute` (as postgres.js does), so the test
 * can close it through its `onclose`; it records what is sent and answers the ledger's check held.
 */
const watched = () => {
  const sent: string[] = [];
  let released = 0;
  const connection: { onclose?: (error: unknown) => void } = {};
  const reserved = {
    unsafe: (
      text: string,
      _params?: never[],
      options?: { prepare?: boolean; onexecute?: (connection: unknown) => boolean },
    ) => {
      sent.push(text);
      options?.onexecute?.(connection);
      return Promise.resolve(
        Object.assign([{ held: true }], { count: 1, command: text.split('; ').at(-1)?.split(' ')[0] }),
      );
    },
    release: () => void (released += 1),
  };
  return {
    sent,
    connection,
    released: () => released,
    sql: Object.assign(() => undefined, { reserve: async () => reserved }),
  };
};

describe('fromPostgresJs and a connection the server closes while the work runs (no statement of the ledger in flight)', () => {
  // postgres.js 3.4.9 writes a statement sent on a closed connection from a setImmediate, to a
  // socket it has set to null: an uncaught TypeError that ends the merchant's process.

  it('COMMIT is not sent on it: the run answers CONNECTION_CLOSED (nothing acknowledged), and the connection is not given back', async () => {
    const db = watched();
    const session = await fromPostgresJs(db.sql).begin(500);
    await session.query('INSERT INTO t VALUES ($1)', ['k']);
    db.connection.onclose?.(
      Object.assign(new Error('terminating connection due to administrator command'), { code: '57P01' }),
    );
    await expect(session.commit(undefined)).rejects.toMatchObject({ code: 'CONNECTION_CLOSED' });
    await expect(session.query('SELECT 1', [])).rejects.toMatchObject({ code: 'CONNECTION_CLOSED' });
    expect(db.sent).toEqual([
      "BEGIN; SET LOCAL lock_timeout = 500; SET LOCAL myr_gateway.ledger_tx = 'on'",
      'INSERT INTO t VALUES ($1)',
    ]);
    expect(db.released()).toBe(0);
  });

  it("the connection's own close handler still runs, and is put back when the run gives the connection back", async () => {
    const db = watched();
    const own: unknown[] = [];
    const ownHandler = (error: unknown) => void own.push(error);
    db.connection.onclose = ownHandler;
    const session = await fromPostgresJs(db.sql).begin(500);
    await session.query('INSERT INTO t VALUES ($1)', ['k']);
    expect(db.connection.onclose).not.toBe(ownHandler);
    db.connection.onclose?.('closed');
    expect(own).toEqual(['closed']);

    const next = watched();
    next.connection.onclose = ownHandler;
    await (await fromPostgresJs(next.sql).begin(500)).commit(undefined);
    expect(next.connection.onclose).toBe(ownHandler);
    expect(next.released()).toBe(1);
  });
});

describe("fromPostgresJs: the work's tx once the run no longer holds a live connection", () => {
  /** A reserved connection whose queries postgres.js would run by calling their handler; it records what ran. */
  const reservedWithQueries = () => {
    const ran: string[] = [];
    const connection: { onclose?: (error: unknown) => void } = {};
    let released = 0;
    const query = (text: string) => {
      let reject!: (error: unknown) => void;
      const pending = new Promise((_resolve, fail) => (reject = fail));
      pending.catch(() => undefined);
      return Object.assign(pending, { handler: () => void ran.push(text), reject, command: 'SET', count: 0 });
    };
    const reserved = Object.assign((strings: TemplateStringsArray, ..._values: unknown[]) => query(strings.join('?')), {
      unsafe: (
        text: string,
        _params?: never[],
        options?: { prepare?: boolean; onexecute?: (connection: unknown) => boolean },
      ) => {
        options?.onexecute?.(connection);
        if (text.startsWith('SELECT CASE WHEN current_setting'))
          return Promise.resolve(Object.assign([{ held: true }], { command: 'COMMIT' }));
        return text.startsWith('BEGIN') || text === 'ROLLBACK'
          ? Promise.resolve(Object.assign([], { command: 'SET' }))
          : query(text);
      },
      types: Object.assign(() => 'typed', { money: () => 'a custom type' }),
      release: () => void (released += 1),
    });
    return { ran, connection, released: () => released, sql: { reserve: async () => reserved } };
  };
  /** Runs a query the way postgres.js does once it is awaited: its handler, with itself. */
  const runQuery = (query: unknown) => {
    const pending = query as { handler: (self: unknown) => unknown };
    pending.handler(pending);
    return query as Promise<unknown>;
  };

  it('a query made before the close and run after it is refused, never sent (it would land on the reconnected connection)', async () => {
    const db = reservedWithQueries();
    const session = await fromPostgresJs(db.sql).begin(500);
    const made = session.tx.unsafe("INSERT INTO orders VALUES ('A')");
    db.connection.onclose?.(new Error('closed'));
    await expect(runQuery(made)).rejects.toMatchObject({ code: 'CONNECTION_CLOSED' });
    await expect(runQuery(session.tx`INSERT INTO orders VALUES (${'A'})`)).rejects.toMatchObject({
      code: 'CONNECTION_CLOSED',
    });
    expect(db.ran).toEqual([]);
  });

  it('a query sent through tx after the run ended is refused; while the run holds the connection, queries run, and the connection keeps its other methods', async () => {
    const db = reservedWithQueries();
    const session = await fromPostgresJs(db.sql).begin(500);
    void runQuery(session.tx.unsafe('UPDATE orders SET paid = true'));
    expect(db.ran).toEqual(['UPDATE orders SET paid = true']);
    expect(session.tx.types.money()).toBe('a custom type');
    await session.commit(undefined);
    await expect(runQuery(session.tx.unsafe('UPDATE orders SET paid = false'))).rejects.toThrow(
      /after its run had ended/,
    );
    expect(db.ran).toEqual(['UPDATE orders SET paid = true']);
    expect(db.released()).toBe(1);
  });

  it('work that threw an error with a syscall (a file, an HTTP call) on a live connection: rolled back and given back', async () => {
    const db = reservedWithQueries();
    const session = await fromPostgresJs(db.sql).begin(500);
    await session.rollback(
      Object.assign(new Error("ENOENT: no such file or directory, open '/etc/shop.json'"), {
        code: 'ENOENT',
        syscall: 'open',
      }),
    );
    expect(db.released()).toBe(1);
  });
});

describe('fromPostgresJs: a rollback whose cause looks like a lost connection, on a watched connection', () => {
  const fatal = Object.assign(new Error('terminating connection due to administrator command'), {
    code: '57P01',
    severity: 'FATAL',
  });

  it('the server ended the session (its FATAL, then the close postgres.js reports): nothing is sent, the connection is not given back', async () => {
    const db = watched();
    const session = await fromPostgresJs(db.sql).begin(500);
    const rolledBack = session.rollback(fatal);
    db.connection.onclose?.(fatal);
    await rolledBack;
    expect(db.sent).not.toContain('ROLLBACK');
    expect(db.released()).toBe(0);
  });

  it('no close is reported (the FATAL came from another client the work used): rolled back and given back', async () => {
    const db = watched();
    const session = await fromPostgresJs(db.sql).begin(500);
    await session.rollback(fatal);
    expect(db.sent.at(-1)).toBe('ROLLBACK');
    expect(db.released()).toBe(1);
  });
});
