/**
 * The ledger's MySQL transaction is READ COMMITTED, which a server logging statements
 * (`binlog_format=STATEMENT`) refuses for InnoDB writes. A merchant on such a server gets a
 * ConfigurationError that says what to change, every delivery is unavailable (503: the gateway
 * retries), and nothing is acknowledged. Real MariaDB 10.11 with its binary log on.
 */
import mysql from 'mysql2/promise';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { ConfigurationError } from '../../../../src/index.js';
import { SqlLedger, fromMysql2 } from '../../../../src/sql/index.js';
import { MariadbServer } from '../../../helpers/mariadb.js';

let server: MariadbServer;
let pool: mysql.Pool;

beforeAll(async () => {
  server = await MariadbServer.start({ args: ['--log-bin=binlog', '--server-id=1', '--binlog-format=STATEMENT'] });
  pool = mysql.createPool({ ...server.options, connectionLimit: 4 });
});
afterAll(async () => {
  await pool?.end();
  await server?.destroy();
});

it('binlog_format=STATEMENT: unavailable with a ConfigurationError naming binlog_format, the handler not run, nothing recorded', async () => {
  const ledger = new SqlLedger(fromMysql2(pool), { table: 'ledger_binlog' });
  await ledger.ensureSchema();
  let ran = false;
  const run = await ledger.run('payment:PAY_BINLOG:SUCCESS', () => void (ran = true), {
    raiseMark: false,
    completedTtlMs: 60_000,
    order: { paymentId: 'PAY_BINLOG', rank: 1 },
  });
  expect(run.outcome).toBe('unavailable');
  expect(run.outcome === 'unavailable' && run.error).toBeInstanceOf(ConfigurationError);
  expect(run.outcome === 'unavailable' && String(run.error)).toMatch(/binlog_format.*ROW or MIXED/);
  expect(ran).toBe(false);
  const [rows] = await pool.query<mysql.RowDataPacket[]>('SELECT count(*) AS n FROM ledger_binlog');
  expect(Number(rows[0]?.n)).toBe(0);
});
