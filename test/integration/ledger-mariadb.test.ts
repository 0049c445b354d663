/**
 * The ledger on a real MariaDB 10.11 through mysql2's promise pool: every scenario of
 * ledger-scenarios.ts.
 */
import mysql from 'mysql2/promise';
import { afterAll, beforeAll } from 'vitest';
import { fromMysql2 } from '../../src/sql/index.js';
import { MariadbServer } from '../helpers/mariadb.js';
import { ledgerScenarios } from './ledger-scenarios.js';

let server: MariadbServer;
let pool: mysql.Pool;
let reader: mysql.Pool;

beforeAll(async () => {
  server = await MariadbServer.start();
  pool = mysql.createPool({ ...server.options, connectionLimit: 20 });
  reader = mysql.createPool({ ...server.options, connectionLimit: 2 });
  await reader.query('CREATE TABLE fulfilments (payment_id VARCHAR(100) NOT NULL)');
});
afterAll(async () => {
  await pool?.end();
  await reader?.end();
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
