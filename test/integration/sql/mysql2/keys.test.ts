/**
 * Keys that differ only by trailing spaces are different keys: MariaDB's (and MySQL's)
 * utf8mb4_bin collation pads with spaces, so its primary key took `…:SUCCESS ` for `…:SUCCESS`
 * and the second job was answered duplicate without running. Real MariaDB 10.11, public runOnce.
 */
import mysql from 'mysql2/promise';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { SqlLedger, fromMysql2 } from '../../../../src/sql/index.js';
import { runOnce } from '../../../../src/webhooks/index.js';
import { MariadbServer } from '../../../helpers/mariadb.js';

let server: MariadbServer;
let pool: mysql.Pool;

beforeAll(async () => {
  server = await MariadbServer.start();
  pool = mysql.createPool({ ...server.options, connectionLimit: 4 });
});
afterAll(async () => {
  await pool?.end();
  await server?.destroy();
});

it('two keys that differ by a trailing space each run once', async () => {
  const ledger = new SqlLedger(fromMysql2(pool), { table: 'ledger_pad' });
  await ledger.ensureSchema();
  const ran: string[] = [];
  const first = await runOnce(ledger, 'refund:R1', () => void ran.push('R1'));
  const second = await runOnce(ledger, 'refund:R1 ', () => void ran.push('R1 '));
  expect([first.outcome, second.outcome]).toEqual(['processed', 'processed']);
  expect(ran).toEqual(['R1', 'R1 ']);
}, 120_000);
