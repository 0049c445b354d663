/**
 * A merchant process for sql/payouts/crash.test.ts, killed with SIGKILL by the test: it opens the
 * database named by DB and DB_URL and either stages one payout (MODE=stage) or drains with a
 * worker (MODE=drain) against the service at BASE_URL, telling the test what it got to over IPC.
 */
import mysql from 'mysql2/promise';
import pg from 'pg';
import { MyrGateway } from '../../../../src/index.js';
import { SqlPayouts, fromMysql2, fromPg, fromSqlite, type SqlClient } from '../../../../src/sql/index.js';

const { DB, DB_URL = '', TABLE, BASE_URL, MERCHANT_ID, API_KEY, MODE, REFERENCE = '', LEASE_MS = '1000' } = process.env;
const tell = (message: string) => process.send?.(message);

function client(): SqlClient<unknown> {
  if (DB === 'postgres') return fromPg(new pg.Pool({ connectionString: DB_URL, max: 2 }));
  if (DB === 'mysql')
    return fromMysql2(mysql.createPool({ ...(JSON.parse(DB_URL) as mysql.PoolOptions), connectionLimit: 2 }));
  return fromSqlite(DB_URL);
}

const payouts = new SqlPayouts(client(), { table: TABLE, onRefused: () => undefined, onSettled: () => undefined });
if (MODE === 'stage') {
  await payouts.transaction(({ tx }) =>
    payouts.stage(tx, {
      amount: '250.00',
      reference_id: REFERENCE,
      bank_code: 'PBBEMYKL',
      account_number: '5140123456789',
      account_name: 'Tan Wei Ming',
    }),
  );
  tell('committed');
} else {
  const gateway = new MyrGateway({
    baseUrl: BASE_URL,
    merchantId: MERCHANT_ID,
    apiKey: API_KEY,
    allowInsecureLoopback: true,
  });
  tell('draining');
  await payouts.worker(gateway, { leaseMs: Number(LEASE_MS) }).drain();
  tell('drained');
}
// Wait to be killed, as a process mid-work would be.
setInterval(() => undefined, 60_000);
