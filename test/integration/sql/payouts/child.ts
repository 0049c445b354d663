/**
 * A merchant process for the payout tests that need more than one process (sql/payouts/
 * crash.test.ts, processes.test.ts, fleet-pacing.test.ts): it opens the database named by DB and
 * DB_URL and either stages one payout (MODE=stage), drains once with a worker (MODE=drain) or
 * starts one (MODE=start) against the service at BASE_URL, telling the test over IPC what it got
 * to: its strings, the drain's report (`{ report }`), each refusal its onRefused was given
 * (`{ refused }`), when it began draining (`{ began }`), and each withdrawal's round trip
 * (`{ roundTripMs, answeredAt }`). With GO set it says `ready` and waits for `go`, so that
 * several processes begin together. LEASE_MS, INTERVAL_MS and PACE (`limit/windowMs`) are the
 * worker's options; unset, the worker's defaults.
 */
import mysql from 'mysql2/promise';
import pg from 'pg';
import { MyrGateway } from '../../../../src/index.js';
import { SqlPayouts, fromMysql2, fromPg, fromSqlite, type SqlClient } from '../../../../src/sql/index.js';

const { DB, DB_URL = '', TABLE, BASE_URL, MERCHANT_ID, API_KEY, MODE, REFERENCE = '', GO } = process.env;
const { LEASE_MS, INTERVAL_MS, PACE } = process.env;
const tell = (message: unknown) => process.send?.(message);
const numberOf = (value: string | undefined) => (value === undefined ? undefined : Number(value));

function client(): SqlClient<unknown> {
  if (DB === 'postgres') return fromPg(new pg.Pool({ connectionString: DB_URL, max: 2 }));
  if (DB === 'mysql')
    return fromMysql2(mysql.createPool({ ...(JSON.parse(DB_URL) as mysql.PoolOptions), connectionLimit: 2 }));
  return fromSqlite(DB_URL);
}

const payouts = new SqlPayouts(client(), {
  table: TABLE,
  onRefused: (refusal) => void tell({ refused: refusal.referenceId }),
  onSettled: () => undefined,
});
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
  // Times each withdrawal from its request to its answer, as this process sees it.
  const timed: typeof fetch = async (input, init) => {
    const started = Date.now();
    const response = await fetch(input, init);
    if (String(input instanceof Request ? input.url : input).endsWith('/withdraw'))
      tell({ roundTripMs: Date.now() - started, answeredAt: Date.now() });
    return response;
  };
  const gateway = new MyrGateway({
    baseUrl: BASE_URL,
    merchantId: MERCHANT_ID,
    apiKey: API_KEY,
    fetch: timed,
    allowInsecureLoopback: true,
  });
  const [limit, windowMs] = (PACE ?? '').split('/').map(Number);
  const worker = payouts.worker(gateway, {
    leaseMs: numberOf(LEASE_MS),
    intervalMs: numberOf(INTERVAL_MS),
    pace: limit !== undefined && windowMs !== undefined ? { limit, windowMs } : undefined,
  });
  if (GO !== undefined) {
    tell('ready');
    await new Promise((resolve) => process.once('message', resolve));
  }
  tell('draining');
  tell({ began: Date.now() });
  if (MODE === 'start') worker.start();
  else {
    tell({ report: await worker.drain() });
    tell('drained');
  }
}
// Wait to be killed, as a process mid-work would be.
setInterval(() => undefined, 60_000);
