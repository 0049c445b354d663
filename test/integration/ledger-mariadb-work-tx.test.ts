/**
 * What the work does with its mysql2 `tx`, on a real MariaDB: COMMIT checks the claim only when
 * the work did something that may have ended the transaction, and always when it did (a failed
 * statement that rolled the whole transaction back, here a lock wait timeout on a server with
 * `innodb_rollback_on_timeout`, which the work swallowed); and a statement sent through `tx`
 * after its run has ended is refused, never sent on a connection that is back in the pool.
 */
import mysql from 'mysql2/promise';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fromMysql2, type SqlLedger } from '../../src/sql/index.js';
import { MariadbServer } from '../helpers/mariadb.js';
import { newLedger } from './ledger-scenarios.js';

let server: MariadbServer;
let pool: mysql.Pool;
let ledger: SqlLedger<mysql.PoolConnection>;
/** Every statement sent on the pool's connections (on mysql2's callback connection, which all go through). */
const sent: string[] = [];

beforeAll(async () => {
  server = await MariadbServer.start({ args: ['--innodb-rollback-on-timeout=ON'] });
  pool = mysql.createPool({ ...server.options, connectionLimit: 4 });
  pool.on('connection', (core: object) => {
    for (const method of ['query', 'execute'] as const) {
      const send: unknown = Reflect.get(core, method);
      if (typeof send === 'function') Reflect.set(core, method, (...args: unknown[]) => (sent.push(String(args[0])), Reflect.apply(send, core, args)));
    }
  });
  ledger = await newLedger(fromMysql2(pool), { lockTimeoutMs: 1000 });
  await pool.query('CREATE TABLE orders (id INT PRIMARY KEY, fulfilled INT NOT NULL DEFAULT 0) ENGINE=InnoDB');
  await pool.query('INSERT INTO orders (id) VALUES (1), (2), (3)');
});
afterAll(async () => {
  await pool?.end();
  await server?.destroy();
});

const fulfilled = async (id: number) => Number((await pool.query<mysql.RowDataPacket[]>('SELECT fulfilled FROM orders WHERE id = ?', [id]))[0][0]?.fulfilled);
const options = { raiseMark: false, completedTtlMs: 60_000 } as const;

describe('the work\'s tx on MariaDB', () => {
  it('plain writes through tx commit with the claim, and COMMIT carries no check: nothing but them was sent since the claim', async () => {
    sent.length = 0;
    const run = await ledger.run('work-tx:plain', async (tx) => {
      await tx.query('UPDATE orders SET fulfilled = fulfilled + 1 WHERE id = ?', [1]);
      await tx.execute('SELECT fulfilled FROM orders WHERE id = ?', [1]);
    }, options);
    expect(run.outcome).toBe('processed');
    expect(await fulfilled(1)).toBe(1);
    expect(sent.find((text) => text.startsWith('SET SESSION autocommit = '))).toMatch(/^SET SESSION autocommit = 'ON', /);
    expect((await ledger.run('work-tx:plain', () => undefined, options)).outcome).toBe('duplicate');
  });

  it('a statement the work sent but did not wait for runs inside the transaction, and COMMIT checks the claim after it (it could have failed and rolled it back)', async () => {
    sent.length = 0;
    const run = await ledger.run('work-tx:unawaited', (tx) => {
      void tx.execute('UPDATE orders SET fulfilled = fulfilled + 1 WHERE id = ?', [1]);
    }, options);
    expect(run.outcome).toBe('processed');
    expect(await fulfilled(1)).toBe(2);
    expect(sent.find((text) => text.startsWith('SET SESSION autocommit = '))).toMatch(/^SET SESSION autocommit = IF\(EXISTS\(/);
  });

  it('a lock wait timeout that rolled the whole transaction back, swallowed by the work that then writes again, is not acknowledged; the retry fulfils once', async () => {
    const blocker = await pool.getConnection();
    await blocker.query('START TRANSACTION');
    await blocker.query('SELECT * FROM orders WHERE id = 2 FOR UPDATE');
    sent.length = 0;
    try {
      const run = await ledger.run('work-tx:swallowed', async (tx) => {
        // Waits for the blocker's row lock, times out (1 s), and the server rolls back the claim too.
        await tx.query('UPDATE orders SET fulfilled = fulfilled + 1 WHERE id = ?', [2]).catch(() => undefined);
        // A new transaction starts here (autocommit is off); without the check, COMMIT would keep it.
        await tx.query('UPDATE orders SET fulfilled = fulfilled + 1 WHERE id = ?', [3]);
      }, options);
      expect(run.outcome).toBe('failed');
      expect(sent.find((text) => text.startsWith('SET SESSION autocommit = '))).toMatch(/^SET SESSION autocommit = IF\(EXISTS\(/);
    } finally {
      await blocker.query('ROLLBACK');
      blocker.release();
    }
    expect(await fulfilled(3)).toBe(0);
    const retry = await ledger.run('work-tx:swallowed', async (tx) => {
      await tx.query('UPDATE orders SET fulfilled = fulfilled + 1 WHERE id = ?', [3]);
    }, options);
    expect(retry.outcome).toBe('processed');
    expect(await fulfilled(3)).toBe(1);
  });

  it('a statement sent through tx after its run ended is refused and never sent', async () => {
    let keep: mysql.PoolConnection | undefined;
    const run = await ledger.run('work-tx:late', (tx) => {
      keep = tx;
    }, options);
    expect(run.outcome).toBe('processed');
    sent.length = 0;
    const late = keep?.query('UPDATE orders SET fulfilled = fulfilled + 100 WHERE id = ?', [1]);
    await expect(late).rejects.toThrow(/after its run had ended/);
    expect(sent).toEqual([]);
    expect(await fulfilled(1)).toBe(2);
  });
});
