/**
 * The ledger on a real MariaDB 10.11 through mysql2's promise pool (every scenario of
 * ledger-scenarios.ts), Kysely and Drizzle over mysql2 (the first two).
 */
import { drizzle } from 'drizzle-orm/mysql2';
import { mysqlTable, varchar } from 'drizzle-orm/mysql-core';
import { Kysely, MysqlDialect } from 'kysely';
import { createPool as createCallbackPool, type Pool as CallbackPool } from 'mysql2';
import mysql from 'mysql2/promise';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fromDrizzle, fromKysely, fromMysql2 } from '../../src/sql/index.js';
import { MariadbServer } from '../helpers/mariadb.js';
import { ledgerScenarios, newLedger } from './ledger-scenarios.js';

let server: MariadbServer;
let pool: mysql.Pool;
let reader: mysql.Pool;
let callbackPool: CallbackPool;

beforeAll(async () => {
  server = await MariadbServer.start();
  pool = mysql.createPool({ ...server.options, connectionLimit: 20 });
  reader = mysql.createPool({ ...server.options, connectionLimit: 2 });
  callbackPool = createCallbackPool({ ...server.options, connectionLimit: 10 });
  await reader.query('CREATE TABLE fulfilments (payment_id VARCHAR(100) NOT NULL)');
});
afterAll(async () => {
  await pool?.end();
  await reader?.end();
  await new Promise((resolve) => (callbackPool ? callbackPool.end(resolve) : resolve(undefined)));
  await server?.destroy();
});

async function fulfilments(payment: string): Promise<number> {
  const [rows] = await reader.query<mysql.RowDataPacket[]>('SELECT count(*) AS n FROM fulfilments WHERE payment_id = ?', [payment]);
  return Number(rows[0]?.n);
}

ledgerScenarios(
  'mysql2 (MariaDB)',
  () => ({
    client: fromMysql2(pool),
    fulfil: async (tx, payment) => void (await tx.query('INSERT INTO fulfilments (payment_id) VALUES (?)', [payment])),
    fulfilments,
    outage: { stop: () => server.stop(), start: () => server.start() },
    closesOnTimeout: true,
  }),
  { outage: true },
);

const FIRST_TWO = ['a callback is processed once; its duplicate finds the record and does not run', 'a handler that throws is rolled back with its writes, and the retry fulfils once'];
interface FulfilmentsTable {
  fulfilments: { payment_id: string };
}

ledgerScenarios(
  'Kysely (MysqlDialect)',
  () => ({
    client: fromKysely(new Kysely<FulfilmentsTable>({ dialect: new MysqlDialect({ pool: callbackPool }) })),
    fulfil: async (tx, payment) => void (await tx.insertInto('fulfilments').values({ payment_id: payment }).execute()),
    fulfilments,
    closesOnTimeout: false,
  }),
  { only: FIRST_TWO },
);

const fulfilmentsTable = mysqlTable('fulfilments', { payment_id: varchar('payment_id', { length: 100 }).notNull() });
ledgerScenarios(
  'Drizzle (mysql2)',
  () => ({
    client: fromDrizzle(drizzle(pool)),
    fulfil: async (tx, payment) => void (await tx.insert(fulfilmentsTable).values({ payment_id: payment })),
    fulfilments,
    closesOnTimeout: false,
  }),
  { only: FIRST_TWO },
);

describe('the merchant\'s pooled connection after a run', () => {
  it('is back in autocommit with its own lock wait timeout, whatever the run came to', async () => {
    const single = mysql.createPool({ ...server.options, connectionLimit: 1 });
    try {
      await single.query('SET SESSION innodb_lock_wait_timeout = 7');
      const ledger = await newLedger(fromMysql2(single), { lockTimeoutMs: 1000 });
      await ledger.run('processed-key', () => undefined, { raiseMark: false, completedTtlMs: 60_000 });
      await ledger.run('failed-key', () => Promise.reject(new Error('handler bug')), { raiseMark: false, completedTtlMs: 60_000 });
      const [rows] = await single.query<mysql.RowDataPacket[]>('SELECT @@SESSION.autocommit AS autocommit, @@SESSION.innodb_lock_wait_timeout AS lockWait');
      expect(rows[0]).toEqual({ autocommit: 1, lockWait: 7 });
    } finally {
      await single.end();
    }
  });
});
