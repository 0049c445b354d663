/**
 * What the work does with its mysql2 `tx`, on a real MariaDB: COMMIT checks the claim only when
 * the work did something that may have ended the transaction, and always when it did (a failed
 * statement that rolled the whole transaction back, here a lock wait timeout on a server with
 * `innodb_rollback_on_timeout`, which the work swallowed); and a statement sent through `tx`
 * after its run has ended is refused, never sent on a connection that is back in the pool.
 */
import mysql from 'mysql2/promise';
import { describe, expect, it, vi } from 'vitest';
import { fromMysql2, type SqlLedger } from '../../../../src/sql/index.js';
import { mariadbForFile } from '../../../helpers/database-for-file.js';
import { recordStatements } from '../../../helpers/mysql2-statements.js';
import { newLedger } from '../scenarios.js';

let ledger: SqlLedger<mysql.PoolConnection>;
/** Every statement sent on the pool's connections (on mysql2's callback connection, which all go through). */
const sent: string[] = [];

const db = mariadbForFile({ args: ['--innodb-rollback-on-timeout=ON'], connectionLimit: 4 }, async (pool) => {
  pool.on('connection', (core: object) => recordStatements(core, sent));
  ledger = await newLedger(fromMysql2(pool), { lockTimeoutMs: 1000 });
  await pool.query('CREATE TABLE orders (id INT PRIMARY KEY, fulfilled INT NOT NULL DEFAULT 0) ENGINE=InnoDB');
  await pool.query('INSERT INTO orders (id) VALUES (1), (2), (3), (4), (5), (6), (7), (8), (9)');
});

const fulfilled = async (id: number) =>
  Number(
    (await db.pool.query<mysql.RowDataPacket[]>('SELECT fulfilled FROM orders WHERE id = ?', [id]))[0][0]?.fulfilled,
  );
const options = { raiseMark: false, completedTtlMs: 60_000 } as const;

describe("the work's tx on MariaDB", () => {
  it('plain writes through tx commit with the claim, and COMMIT carries no check: nothing but them was sent since the claim', async () => {
    sent.length = 0;
    const run = await ledger.run(
      'work-tx:plain',
      async (tx) => {
        await tx.query('UPDATE orders SET fulfilled = fulfilled + 1 WHERE id = ?', [1]);
        await tx.execute('SELECT fulfilled FROM orders WHERE id = ?', [1]);
      },
      options,
    );
    expect(run.outcome).toBe('processed');
    expect(await fulfilled(1)).toBe(1);
    expect(sent.find((text) => text.startsWith('SET SESSION autocommit = '))).toMatch(
      /^SET SESSION autocommit = 'ON', /,
    );
    expect((await ledger.run('work-tx:plain', () => undefined, options)).outcome).toBe('duplicate');
  });

  it('a plain write built with tx.escape and tx.format is still plain: COMMIT carries no check', async () => {
    sent.length = 0;
    const run = await ledger.run(
      'work-tx:escaped',
      async (tx) => {
        await tx.query(
          tx.format('UPDATE orders SET fulfilled = fulfilled + 1 WHERE id = ?', [6]) +
            ` AND ${tx.escapeId('id')} = ${tx.escape(6)}`,
        );
      },
      options,
    );
    expect(run.outcome).toBe('processed');
    expect(await fulfilled(6)).toBe(1);
    expect(sent.find((text) => text.startsWith('SET SESSION autocommit = '))).toMatch(
      /^SET SESSION autocommit = 'ON', /,
    );
  });

  it('a statement the work sent but did not wait for runs inside the transaction, and COMMIT checks the claim after it (it could have failed and rolled it back)', async () => {
    sent.length = 0;
    const run = await ledger.run(
      'work-tx:unawaited',
      (tx) => {
        void tx.execute('UPDATE orders SET fulfilled = fulfilled + 1 WHERE id = ?', [1]);
      },
      options,
    );
    expect(run.outcome).toBe('processed');
    expect(await fulfilled(1)).toBe(2);
    expect(sent.find((text) => text.startsWith('SET SESSION autocommit = '))).toMatch(
      /^SET SESSION autocommit = IF\(EXISTS\(/,
    );
  });

  it('a lock wait timeout that rolled the whole transaction back, swallowed by the work that then writes again, is not acknowledged; the retry fulfils once', async () => {
    const blocker = await db.pool.getConnection();
    await blocker.query('START TRANSACTION');
    await blocker.query('SELECT * FROM orders WHERE id = 2 FOR UPDATE');
    sent.length = 0;
    try {
      const run = await ledger.run(
        'work-tx:swallowed',
        async (tx) => {
          // Waits for the blocker's row lock, times out (1 s), and the server rolls back the claim too.
          await tx.query('UPDATE orders SET fulfilled = fulfilled + 1 WHERE id = ?', [2]).catch(() => undefined);
          // A new transaction starts here (autocommit is off); without the check, COMMIT would keep it.
          await tx.query('UPDATE orders SET fulfilled = fulfilled + 1 WHERE id = ?', [3]);
        },
        options,
      );
      expect(run.outcome).toBe('failed');
      expect(sent.find((text) => text.startsWith('SET SESSION autocommit = '))).toMatch(
        /^SET SESSION autocommit = IF\(EXISTS\(/,
      );
    } finally {
      await blocker.query('ROLLBACK');
      blocker.release();
    }
    expect(await fulfilled(3)).toBe(0);
    const retry = await ledger.run(
      'work-tx:swallowed',
      async (tx) => {
        await tx.query('UPDATE orders SET fulfilled = fulfilled + 1 WHERE id = ?', [3]);
      },
      options,
    );
    expect(retry.outcome).toBe('processed');
    expect(await fulfilled(3)).toBe(1);
  });

  it('a statement sent through tx after its run ended is refused and never sent', async () => {
    let keep: mysql.PoolConnection | undefined;
    const run = await ledger.run(
      'work-tx:late',
      (tx) => {
        keep = tx;
      },
      options,
    );
    expect(run.outcome).toBe('processed');
    sent.length = 0;
    const late = keep?.query('UPDATE orders SET fulfilled = fulfilled + 100 WHERE id = ?', [1]);
    await expect(late).rejects.toThrow(/after its run had ended/);
    expect(sent).toEqual([]);
    expect(await fulfilled(1)).toBe(2);
  });
});

describe("the work's tx on MariaDB: the callback connection underneath, read without `tx.connection`", () => {
  it("read through its property descriptor (as code copying tx's properties does), what is sent on it makes COMMIT check the claim: the callback is not acknowledged, and its retry fulfils once", async () => {
    const fulfil = async (tx: mysql.PoolConnection) => {
      const core: unknown = Object.getOwnPropertyDescriptor(tx, 'connection')?.value;
      const query: unknown = typeof core === 'object' && core !== null ? Reflect.get(core, 'query') : undefined;
      if (typeof query !== 'function') throw new Error('tx has no callback connection');
      await new Promise((resolve, reject) =>
        Reflect.apply(query, core, ['ROLLBACK', (error: Error | null) => (error ? reject(error) : resolve(undefined))]),
      );
      await tx.query('UPDATE orders SET fulfilled = fulfilled + 1 WHERE id = ?', [8]);
    };
    const first = await ledger.run('work-tx:descriptor', fulfil, options);
    expect(first.outcome).toBe('failed');
    expect(await fulfilled(8)).toBe(0);
    const retry = await ledger.run(
      'work-tx:descriptor',
      async (tx) => {
        await tx.query('UPDATE orders SET fulfilled = fulfilled + 1 WHERE id = ?', [8]);
      },
      options,
    );
    expect(retry.outcome).toBe('processed');
    expect(await fulfilled(8)).toBe(1);
  });
});

describe("the work's tx on MariaDB: a pool with multipleStatements", () => {
  it('a plain statement whose value is raw SQL (mysql.raw) ending the transaction is not taken for plain: the callback is not acknowledged, and its retry fulfils once', async () => {
    const multi = mysql.createPool({ ...db.server.options, connectionLimit: 1, multipleStatements: true });
    try {
      const multiLedger = await newLedger(fromMysql2(multi), { lockTimeoutMs: 1000 });
      const fulfil = async (tx: mysql.PoolConnection) => {
        // The text is one plain SELECT; the statement sent is that SELECT, then a ROLLBACK.
        await tx.query('SELECT 1 AS one, ?', [mysql.raw('2; ROLLBACK')]);
        await tx.query('UPDATE orders SET fulfilled = fulfilled + 1 WHERE id = ?', [7]);
      };
      const first = await multiLedger.run('work-tx:raw', fulfil, options);
      expect(first.outcome).toBe('failed');
      expect(await fulfilled(7)).toBe(0);
      const retry = await multiLedger.run(
        'work-tx:raw',
        async (tx) => {
          await tx.query('UPDATE orders SET fulfilled = fulfilled + 1 WHERE id = ?', [7]);
        },
        options,
      );
      expect(retry.outcome).toBe('processed');
      expect(await fulfilled(7)).toBe(1);
    } finally {
      await multi.end();
    }
  });
});

describe("the work's tx on MariaDB: after its run", () => {
  it('the callback connection under tx (`tx.connection`, where mysql2 and libraries over it send) is refused after the run: nothing is sent', async () => {
    let keep: mysql.PoolConnection | undefined;
    const run = await ledger.run(
      'work-tx:late-core',
      (tx) => {
        keep = tx;
      },
      options,
    );
    expect(run.outcome).toBe('processed');
    const before = await fulfilled(1);
    sent.length = 0;
    const late = new Promise<unknown>((resolve, reject) => {
      // mysql2's typings name `connection` the promise connection; it is the callback one.
      const core: object | undefined = keep?.connection;
      const query: unknown = core && Reflect.get(core, 'query');
      if (typeof query !== 'function') throw new Error('tx has no callback connection');
      Reflect.apply(query, core, [
        'UPDATE orders SET fulfilled = fulfilled + 100 WHERE id = ?',
        [1],
        (error: Error | null, result: unknown) => (error ? reject(error) : resolve(result)),
      ]);
    });
    await expect(late).rejects.toThrow(/after its run had ended/);
    expect(sent).toEqual([]);
    expect(await fulfilled(1)).toBe(before);
  });

  it("what tx's EventEmitter methods answer (the connection, for chaining) is tx, refused after the run as tx is: nothing is sent", async () => {
    let keep: mysql.PoolConnection | undefined;
    const run = await ledger.run(
      'work-tx:late-chained',
      (tx) => {
        keep = tx.on('error', () => undefined);
      },
      options,
    );
    expect(run.outcome).toBe('processed');
    const before = await fulfilled(1);
    sent.length = 0;
    await expect(keep?.query('UPDATE orders SET fulfilled = fulfilled + 100 WHERE id = ?', [1])).rejects.toThrow(
      /after its run had ended/,
    );
    expect(sent).toEqual([]);
    expect(await fulfilled(1)).toBe(before);
  });

  it('a statement prepared through tx (kept to reuse in later callbacks) is refused after the run: nothing is sent on the connection back in the pool', async () => {
    let kept: mysql.PreparedStatementInfo | undefined;
    const run = await ledger.run(
      'work-tx:late-prepared',
      async (tx) => {
        kept = await tx.prepare('UPDATE orders SET fulfilled = fulfilled + 1 WHERE id = ?');
        await kept.execute([9]);
      },
      options,
    );
    expect(run.outcome).toBe('processed');
    expect(await fulfilled(9)).toBe(1);
    sent.length = 0;
    await expect(kept?.execute([9])).rejects.toThrow(/after its run had ended/);
    expect(sent).toEqual([]);
    expect(await fulfilled(9)).toBe(1);
  });

  it('what sends nothing still works after the run (escape, format, threadId)', async () => {
    let keep: mysql.PoolConnection | undefined;
    await ledger.run(
      'work-tx:late-escape',
      (tx) => {
        keep = tx;
      },
      options,
    );
    expect([keep?.escape("it's"), keep?.escapeId('a'), keep?.format('SELECT ?', [1]), typeof keep?.threadId]).toEqual([
      "'it\\'s'",
      '`a`',
      'SELECT 1',
      'number',
    ]);
  });
});

describe("the work's tx on MariaDB: giving the connection back", () => {
  // mysql2's other ways to give a pooled connection back: `end()` (deprecated, it releases) and
  // `[Symbol.asyncDispose]` (what `await using` calls). Mid-run, either puts the connection back
  // in the pool inside the run's open transaction.
  it.each([
    ['end()', (tx: mysql.PoolConnection) => tx.end()],
    ['[Symbol.asyncDispose]() (await using)', (tx: mysql.PoolConnection) => tx[Symbol.asyncDispose]()],
  ])(
    "tx.%s in the work does not let another run check the connection out inside this run's transaction",
    async (_, giveBack) => {
      const solo = mysql.createPool({ ...db.server.options, connectionLimit: 1 });
      // mysql2 warns when end() reaches a pooled connection (it releases it): it must not.
      const warned = vi.spyOn(console, 'warn').mockImplementation(() => undefined);
      try {
        const soloLedger = await newLedger(fromMysql2(solo), { lockTimeoutMs: 1000 });
        let aSettled = (): void => undefined;
        const aDone = new Promise<void>((resolve) => (aSettled = resolve));
        let bStarted = (): void => undefined;
        const bRunning = new Promise<void>((resolve) => (bStarted = resolve));
        let b: Promise<unknown> | undefined;
        const a = await soloLedger.run(
          'give-back:a',
          async (tx) => {
            await giveBack(tx);
            // Another callback arrives: its run waits for the pool's one connection (`enqueue`), or
            // gets this run's connection while its transaction is open.
            const queued = new Promise((resolve) => solo.once('enqueue', resolve));
            b = soloLedger.run(
              'give-back:b',
              async (txB) => {
                bStarted();
                await txB.query('UPDATE orders SET fulfilled = fulfilled + 1 WHERE id = ?', [5]);
                await aDone;
                throw new Error('B fails after its write');
              },
              options,
            );
            await Promise.race([bRunning, queued]);
            await tx.query('UPDATE orders SET fulfilled = fulfilled + 1 WHERE id = ?', [4]);
          },
          options,
        );
        aSettled();
        expect(a.outcome).toBe('processed');
        expect(await fulfilled(4)).toBe(1);
        expect(await b).toMatchObject({ outcome: 'failed' });
        // B failed: none of its writes is kept, and its redelivery runs it again.
        expect(await fulfilled(5)).toBe(0);
        expect((await soloLedger.run('give-back:b', () => undefined, options)).outcome).toBe('processed');
        // The pool's connection is back with its own settings: a plain write commits on its own.
        expect((await solo.query<mysql.RowDataPacket[]>('SELECT @@autocommit AS ac'))[0][0]?.ac).toBe(1);
        expect(warned).not.toHaveBeenCalled();
      } finally {
        warned.mockRestore();
        await solo.end();
        await db.pool.query('UPDATE orders SET fulfilled = 0 WHERE id IN (4, 5)');
      }
    },
  );
});
