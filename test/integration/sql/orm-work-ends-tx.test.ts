/**
 * Work that ends the ledger's transaction itself through Kysely's or Drizzle's `tx`. The ORMs'
 * check before COMMIT looks for the claim's row: after a ROLLBACK of the work (even followed by a
 * BEGIN of its own) it is gone, and the run is the handler's failure (500), nothing committed, the
 * retry runs the work; after a COMMIT of the work, the claim (written already done) committed
 * with the work's writes, so the run is answered processed and the redelivery is a duplicate:
 * fulfilled once either way, even when a duplicate of the same ms claimed the key in between (the
 * check looks for the run's own claim_id). docs/ledger.md's answers table says so. So on these
 * clients a payment outcome's run keeps a row of its own, which no other run claims: in the
 * payment's row, the payment's REFUNDED, handled once work that sent `write; COMMIT` let that row
 * go, would write its own claim_id there, and the run would be answered failed (500) though its
 * claim and first write committed, what it wrote after a BEGIN of its own lost (the retry
 * superseded). Real PostgreSQL 15 through the public runOnce (node-postgres and postgres.js:
 * sql/pg/work-ends-tx.test.ts).
 */
import { sql as drizzleSql } from 'drizzle-orm';
import { drizzle } from 'drizzle-orm/node-postgres';
import { Kysely, PostgresDialect, sql as kyselySql } from 'kysely';
import pg from 'pg';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { SqlLedger, fromDrizzle, fromKysely, type SqlClient } from '../../../src/sql/index.js';
import { paymentKey, runOnce, WebhookHandlerError, type LedgerRun } from '../../../src/webhooks/index.js';
import { PostgresServer } from '../../helpers/postgres.js';
import { atMs } from '../../helpers/same-ms.js';

let server: PostgresServer;
let pool: pg.Pool;

beforeAll(async () => {
  server = await PostgresServer.start();
  pool = new pg.Pool({ connectionString: server.url, max: 4 });
  await pool.query('CREATE TABLE orders (k text)');
});
afterAll(async () => {
  await pool?.end();
  await server?.destroy();
});

/** Each ORM's client, and a raw statement sent through its `tx`. */
const orms: Record<
  string,
  { client: () => SqlClient<unknown>; send: (tx: unknown, text: string) => Promise<unknown> }
> = {
  Kysely: {
    client: () => fromKysely(new Kysely<Record<string, never>>({ dialect: new PostgresDialect({ pool }) })),
    send: (tx, text) => kyselySql.raw(text).execute(tx as Kysely<Record<string, never>>),
  },
  Drizzle: {
    client: () => fromDrizzle(drizzle(pool)),
    send: (tx, text) => (tx as ReturnType<typeof drizzle>).execute(drizzleSql.raw(text)),
  },
};
/** What the work sends through tx, in order (`write`: its order's INSERT). */
const endings = ['write; ROLLBACK', 'ROLLBACK; BEGIN; write', 'write; COMMIT', 'write; COMMIT; BEGIN'];
const cases = Object.keys(orms).flatMap((orm) => endings.map((ending) => [orm, ending] as const));
const orders = async (key: string) =>
  (await pool.query<{ n: number }>('SELECT count(*)::int AS n FROM orders WHERE k = $1', [key])).rows[0]?.n;

it.each(cases)(
  '%s: work that sends "%s" through tx is fulfilled once, never acknowledged without its record',
  async (orm, ending) => {
    const { client, send } = orms[orm]!;
    const ledger = new SqlLedger(client(), { table: `ledger_ends_tx_${orm.toLowerCase()}` });
    await ledger.ensureSchema();
    const key = `payment:PAY_${orm}_${ending.replace(/\W/g, '')}:SUCCESS`;
    const write = `INSERT INTO orders VALUES ('${key}')`;
    const work = async (tx: unknown) => {
      for (const statement of ending.split('; ')) await send(tx, statement === 'write' ? write : statement);
    };
    const first = await runOnce(ledger, key, ({ tx }) => work(tx)).then(
      (result) => result.outcome,
      (error: unknown) => (error instanceof WebhookHandlerError ? `failed at ${error.stage}` : error),
    );
    let ranAgain = false;
    const redelivery = await runOnce(ledger, key, async ({ tx }) => {
      ranAgain = true;
      await send(tx, write);
    });
    if (ending.includes('ROLLBACK')) {
      // The claim went with the ROLLBACK: the run failed, nothing of it committed (a write in the
      // work's own new transaction is rolled back), and the retry runs.
      expect([first, redelivery.outcome, ranAgain]).toEqual(['failed at handler', 'processed', true]);
    } else {
      // The work's COMMIT took the claim (written done) along: recorded with the work, once.
      expect([first, redelivery.outcome, ranAgain]).toEqual(['processed', 'duplicate', false]);
    }
    expect(await orders(key)).toBe(1);
    expect(pool.totalCount - pool.idleCount).toBe(0);
  },
  60_000,
);

it.each(Object.keys(orms))(
  '%s: work that sends "ROLLBACK; BEGIN", while a duplicate of the same ms claims the key and commits, then writes: fulfilled once',
  async (orm) => {
    const { client, send } = orms[orm]!;
    const ledger = new SqlLedger(client(), { table: `ledger_ends_tx_same_ms_${orm.toLowerCase()}` });
    await ledger.ensureSchema();
    const key = `payment:PAY_${orm}_SAME_MS:SUCCESS`;
    const write = `INSERT INTO orders VALUES ('${key}')`;
    const options = { raiseMark: false, completedTtlMs: 86_400_000 };
    const now = Date.now();
    let duplicate: LedgerRun<void> | undefined;
    const first = await atMs(now, () =>
      ledger.run(
        key,
        async (tx) => {
          await send(tx, 'ROLLBACK');
          await send(tx, 'BEGIN');
          // The key is free again: a duplicate delivered in the same ms claims it (the same expiry) and commits.
          duplicate = await atMs(now, () => ledger.run(key, async (other) => void (await send(other, write)), options));
          await send(tx, write);
        },
        options,
      ),
    );
    expect(await orders(key)).toBe(1);
    expect(duplicate?.outcome).toBe('processed');
    expect(first.outcome).toBe('failed');
    expect(pool.totalCount - pool.idleCount).toBe(0);
  },
  60_000,
);

it.each(Object.keys(orms))(
  '%s: work that sends "write; COMMIT; BEGIN; write" through tx while its REFUNDED is handled is answered processed, both writes once',
  async (orm) => {
    const { client, send } = orms[orm]!;
    const ledger = new SqlLedger(client(), { table: `ledger_commit_beside_${orm.toLowerCase()}` });
    await ledger.ensureSchema();
    const payment = `PAY_${orm}_BESIDE`;
    const key = paymentKey(payment, 'SUCCESS');
    const first = await runOnce(ledger, key, async ({ tx }) => {
      await send(tx, `INSERT INTO orders VALUES ('${key}:before')`);
      await send(tx, 'COMMIT');
      // The payment's REFUNDED arrives now (its lock is free: the SUCCESS committed) and is handled.
      expect((await runOnce(ledger, paymentKey(payment, 'REFUNDED'), () => undefined)).outcome).toBe('processed');
      await send(tx, 'BEGIN');
      await send(tx, `INSERT INTO orders VALUES ('${key}:after')`);
    }).then(
      (result) => result.outcome,
      (error: unknown) => (error instanceof WebhookHandlerError ? `failed at ${error.stage}` : error),
    );
    let ranAgain = false;
    const redelivery = await runOnce(ledger, key, () => void (ranAgain = true));
    // As without the REFUNDED beside it (above): 200, and the redelivery does
    // not run (superseded now: the REFUNDED was handled after it).
    const written = [await orders(`${key}:before`), await orders(`${key}:after`)];
    expect({ first, redelivery: redelivery.outcome, ranAgain, written }).toEqual({
      first: 'processed',
      redelivery: 'superseded',
      ranAgain: false,
      written: [1, 1],
    });
  },
  60_000,
);
