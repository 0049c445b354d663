/**
 * The merchant's pooled connection, after the ledger ran on it, runs its next transaction at its
 * own isolation level, as it reads, not only as `@@SESSION` says. MariaDB 10.11 keeps a level set
 * for the next transaction only (`SET @@tx_isolation = …` with no scope) past a COMMIT made by
 * turning autocommit on, the ledger's own way to commit: a session value saved and restored is
 * what leaves the connection as it found it.
 */
import mysql from 'mysql2/promise';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fromMysql2 } from '../../../../src/sql/index.js';
import { MariadbServer } from '../../../helpers/mariadb.js';
import { newLedger } from '../scenarios.js';

let server: MariadbServer;
let writer: mysql.Pool;

beforeAll(async () => {
  server = await MariadbServer.start();
  writer = mysql.createPool({ ...server.options, connectionLimit: 1 });
  await writer.query('CREATE TABLE seen (id INT PRIMARY KEY) ENGINE=InnoDB');
});
afterAll(async () => {
  await writer?.end();
  await server?.destroy();
});

let inserted = 0;

/** Whether a transaction on `connection` sees a row committed by another one after its first read (READ COMMITTED does; REPEATABLE READ does not). */
async function seesLaterCommits(connection: mysql.Pool): Promise<boolean> {
  const conn = await connection.getConnection();
  try {
    await conn.query('START TRANSACTION');
    const count = async () =>
      Number((await conn.query<mysql.RowDataPacket[]>('SELECT count(*) AS n FROM seen'))[0][0]?.n);
    const before = await count();
    await writer.query('INSERT INTO seen (id) VALUES (?)', [++inserted]);
    const after = await count();
    await conn.query('ROLLBACK');
    return after > before;
  } finally {
    conn.release();
  }
}

describe("the merchant's pooled connection after a run (MariaDB)", () => {
  it('runs its next transaction at its own REPEATABLE READ, after a processed run and after a failed one', async () => {
    const single = mysql.createPool({ ...server.options, connectionLimit: 1 });
    try {
      const ledger = await newLedger(fromMysql2(single), { lockTimeoutMs: 1000 });
      expect(await seesLaterCommits(single)).toBe(false);
      expect(
        (await ledger.run('processed-key', () => undefined, { raiseMark: false, completedTtlMs: 60_000 })).outcome,
      ).toBe('processed');
      expect(await seesLaterCommits(single)).toBe(false);
      expect(
        (
          await ledger.run('failed-key', () => Promise.reject(new Error('handler bug')), {
            raiseMark: false,
            completedTtlMs: 60_000,
          })
        ).outcome,
      ).toBe('failed');
      expect(await seesLaterCommits(single)).toBe(false);
    } finally {
      await single.end();
    }
  });
});
