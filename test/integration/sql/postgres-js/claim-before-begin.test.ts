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

const CASES = [
  { name: 'a payment outcome, its payment new', key: 'payment:PAY_BEGIN_1:SUCCESS', before: undefined },
  {
    name: "a payment outcome, its payment's row there already",
    key: 'payment:PAY_BEGIN_2:SUCCESS',
    before: 'payment:PAY_BEGIN_2:PENDING',
  },
  { name: 'a plain key', key: 'reconcile:PAY_BEGIN_3', before: undefined },
] as const;

for (const [index, { name, key, before }] of CASES.entries()) {
  it(`a BEGIN that failed takes the claim sent behind it along: nothing is recorded, and the retry runs the work (${name})`, async () => {
    const table = `ledger_claim_before_begin_${index}`;
    const plain = new SqlLedger(fromPostgresJs(sql), { table });
    await plain.ensureSchema();
    if (before !== undefined) expect((await runOnce(plain, before, () => undefined)).outcome).toBe('processed');
    const rowsBefore = await sql.unsafe(`SELECT ledger_key, handled_statuses FROM ${table} ORDER BY ledger_key`);
    const ledger = new SqlLedger(fromPostgresJs(beginCancelledOnce(sql)), { table });
    let runs = 0;
    const first = await runOnce(ledger, key, () => void (runs += 1)).catch((error: unknown) => error);
    expect(first).toMatchObject({ stage: 'store' });
    expect(runs).toBe(0);
    // Neither a key's row nor a status's bit in the payment's row: the table is as it was.
    expect(await sql.unsafe(`SELECT ledger_key, handled_statuses FROM ${table} ORDER BY ledger_key`)).toEqual(
      rowsBefore,
    );

    const retry = await runOnce(ledger, key, () => void (runs += 1));
    expect(retry.outcome).toBe('processed');
    expect(runs).toBe(1);
  });
}
