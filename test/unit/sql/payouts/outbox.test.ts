/**
 * src/sql/payouts/outbox.ts: the outbox's own transactions on real SQLite: committed when the
 * work returns, rolled back when it throws, and its `tx` known to stage only while open.
 */
import type { DatabaseSync } from 'node:sqlite';
import { sqliteFile } from '../../../helpers/sqlite-file.js';
import { describe, expect, it } from 'vitest';
import { fromSqlite } from '../../../../src/sql/index.js';
import { transactionOf, type Outbox } from '../../../../src/sql/payouts/outbox.js';
import { payoutStatementsOf } from '../../../../src/sql/payouts/rows.js';
import { sessionOf } from '../../../../src/sql/payouts/session-of-tx.js';

function outbox(db: DatabaseSync): Outbox<DatabaseSync> {
  return {
    client: fromSqlite(db),
    sql: payoutStatementsOf('sqlite'),
    table: 't',
    lockTimeoutMs: 100,
    onRefused: () => undefined,
    onSettled: () => undefined,
  };
}
const count = (db: DatabaseSync) => Number(db.prepare('SELECT count(*) AS n FROM t').get()?.n);

describe('transactionOf', () => {
  it('commits what the work wrote when it returns, and answers its value', async () => {
    const db = sqliteFile();
    db.exec('CREATE TABLE t (x INTEGER)');
    const value = await transactionOf(outbox(db), async (session) => {
      expect(sessionOf(session.tx)).toBe(session);
      await session.query('INSERT INTO t (x) VALUES (?)', [1]);
      return 'done';
    });
    expect(value).toBe('done');
    expect(count(db)).toBe(1);
    expect(sessionOf(db)).toBeUndefined();
  });

  it('rolls back when the work throws, and throws that', async () => {
    const db = sqliteFile();
    db.exec('CREATE TABLE t (x INTEGER)');
    await expect(
      transactionOf(outbox(db), async (session) => {
        await session.query('INSERT INTO t (x) VALUES (?)', [1]);
        throw new Error('the debit failed');
      }),
    ).rejects.toThrow('the debit failed');
    expect(count(db)).toBe(0);
    expect(sessionOf(db)).toBeUndefined();
  });
});
