/**
 * postgres.js pipelines: the ledger's claim leaves right behind `BEGIN; SET LOCAL …`, before its
 * answer. When that BEGIN fails and the connection lives on (a cancel or a statement_timeout that
 * lands before BEGIN ran), the claim must not run on its own and commit: the callback would be
 * recorded done without its work, and every retry answered `duplicate`. Real PostgreSQL 15; the
 * failed BEGIN is simulated by a reserved connection that refuses it without sending it, while
 * every other statement goes to the server.
 */
import postgres from 'postgres';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { SqlLedger, fromPostgresJs } from '../../../../src/sql/index.js';
import { runOnce } from '../../../../src/webhooks/index.js';
import { PostgresServer } from '../../../helpers/postgres.js';

let server: PostgresServer;
let sql: postgres.Sql;

beforeAll(async () => {
  server = await PostgresServer.start();
  sql = postgres(server.url, { max: 2, onnotice: () => undefined });
});
afterAll(async () => {
  await sql?.end({ timeout: 1 });
  await server?.destroy();
});

/** The merchant's postgres.js, whose next BEGIN is cancelled before it runs (57014), the connection still alive. */
function beginCancelledOnce(real: postgres.Sql) {
  let cancelling = true;
  return {
    reserve: async () => {
      const reserved = await real.reserve();
      return {
        unsafe: (text: string, params?: never[], options?: { prepare?: boolean }) => {
          if (!cancelling || !text.startsWith('BEGIN')) return reserved.unsafe(text, params, options);
          cancelling = false;
          return Promise.reject(
            Object.assign(new Error('canceling statement due to statement timeout'), {
              code: '57014',
              severity: 'ERROR',
            }),
          );
        },
        release: () => reserved.release(),
      };
    },
  };
}

for (const ordered of [true, false]) {
  it(`a BEGIN that failed takes the claim sent behind it along: nothing is recorded, and the retry runs the work (${ordered ? 'with the payment' : 'a plain key'})`, async () => {
    const table = `ledger_claim_before_begin_${ordered ? 'ordered' : 'plain'}`;
    await new SqlLedger(fromPostgresJs(sql), { table }).ensureSchema();
    const ledger = new SqlLedger(fromPostgresJs(beginCancelledOnce(sql)), { table });
    const key = 'payment:PAY_BEGIN_1:SUCCESS';
    const payment = ordered ? { payment: { payment_id: 'PAY_BEGIN_1', status: 'SUCCESS' } } : {};
    let runs = 0;
    const first = await runOnce(ledger, key, () => void (runs += 1), payment).catch((error: unknown) => error);
    expect(first).toMatchObject({ stage: 'store' });
    expect(runs).toBe(0);
    expect(await sql.unsafe(`SELECT ledger_key FROM ${table} WHERE ledger_key LIKE 'k:%'`)).toHaveLength(0);

    const retry = await runOnce(ledger, key, () => void (runs += 1), payment);
    expect(retry.outcome).toBe('processed');
    expect(runs).toBe(1);
  });
}
