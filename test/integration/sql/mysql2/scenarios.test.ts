/**
 * The ledger on a real MariaDB 10.11 through mysql2's promise pool (every scenario of
 * sql/scenarios.ts), Kysely and Drizzle over mysql2 (the first two).
 */
import { drizzle } from 'drizzle-orm/mysql2';
import { mysqlTable, varchar } from 'drizzle-orm/mysql-core';
import { Kysely, MysqlDialect } from 'kysely';
import { createPool as createCallbackPool, type Pool as CallbackPool } from 'mysql2';
import mysql from 'mysql2/promise';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SqlLedger, fromDrizzle, fromKysely, fromMysql2 } from '../../../../src/sql/index.js';
import { MariadbServer } from '../../../helpers/mariadb.js';
import { recordStatements } from '../../../helpers/mysql2-statements.js';
import { ledgerScenarios, newLedger, HANDLED_FOR_GOOD } from '../scenarios.js';

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
  const [rows] = await reader.query<mysql.RowDataPacket[]>(
    'SELECT count(*) AS n FROM fulfilments WHERE payment_id = ?',
    [payment],
  );
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

const FIRST_TWO = [
  'a callback is processed once; its duplicate finds the record and does not run',
  'a handler that throws is rolled back with its writes, and the retry fulfils once',
  HANDLED_FOR_GOOD,
];
interface FulfilmentsTable {
  fulfilments: { payment_id: string };
}

ledgerScenarios(
  'Kysely (MysqlDialect)',
  () => ({
    client: fromKysely(new Kysely<FulfilmentsTable>({ dialect: new MysqlDialect({ pool: callbackPool }) })),
    fulfil: async (tx, payment) => void (await tx.insertInto('fulfilments').values({ payment_id: payment }).execute()),
    fulfilments,
    closesOnTimeout: true,
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
    closesOnTimeout: true,
  }),
  { only: FIRST_TWO },
);

describe("the merchant's pooled connection after a run", () => {
  it('is back in autocommit with its own lock wait timeout and isolation level, whatever the run came to', async () => {
    const single = mysql.createPool({ ...server.options, connectionLimit: 1 });
    try {
      await single.query("SET SESSION innodb_lock_wait_timeout = 7, SESSION tx_isolation = 'SERIALIZABLE'");
      const ledger = await newLedger(fromMysql2(single), { lockTimeoutMs: 1000 });
      await ledger.run('processed-key', () => undefined, { raiseMark: false, completedTtlMs: 60_000 });
      await ledger.run('failed-key', () => Promise.reject(new Error('handler bug')), {
        raiseMark: false,
        completedTtlMs: 60_000,
      });
      const [rows] = await single.query<mysql.RowDataPacket[]>(
        'SELECT @@SESSION.autocommit AS autocommit, @@SESSION.innodb_lock_wait_timeout AS lockWait, @@SESSION.tx_isolation AS isolation',
      );
      expect(rows[0]).toEqual({ autocommit: 1, lockWait: 7, isolation: 'SERIALIZABLE' });
    } finally {
      await single.end();
    }
  });
});

describe('round trips of one callback through mysql2', () => {
  /**
   * A pool whose connections record every statement the ledger sends (plain or prepared), on
   * mysql2's callback connection under the promise one, which the ledger's own statements and
   * the promise connection's both go through.
   */
  function counting(target: mysql.Pool) {
    const sent: string[] = [];
    const counted = {
      getConnection: async () => {
        const connection = await target.getConnection();
        recordStatements(connection.connection, sent);
        return connection;
      },
    };
    return { client: fromMysql2(counted), sent };
  }

  it("a payment callback is three: open, claim (the payment's mark row written beside the key's, so locked), commit with its check", async () => {
    const { client, sent } = counting(pool);
    const ledger = await newLedger(client, { table: 'ledger_round_trips' });
    sent.length = 0;
    const run = await ledger.run('payment:PAY_RT:SUCCESS', () => undefined, {
      raiseMark: false,
      completedTtlMs: 60_000,
      order: { paymentId: 'PAY_RT', rank: 1 },
    });
    expect(run.outcome).toBe('processed');
    expect(sent).toHaveLength(3);
    // The duplicate finds the record and runs nothing.
    expect(
      (
        await ledger.run('payment:PAY_RT:SUCCESS', () => undefined, {
          raiseMark: false,
          completedTtlMs: 60_000,
          order: { paymentId: 'PAY_RT', rank: 1 },
        })
      ).outcome,
    ).toBe('duplicate');
  });

  it('the first callbacks of a new ledger, at once, are all processed (MariaDB 10.11 names its isolation variable tx_isolation; each run finds that out safely)', async () => {
    await newLedger(fromMysql2(pool), { table: 'ledger_first_burst' });
    // Warm connections, so the runs' first statements leave together.
    const warm = await Promise.all(Array.from({ length: 12 }, () => pool.getConnection()));
    for (const connection of warm) connection.release();
    // A fresh client: its first statements are these runs' own.
    const ledger = new SqlLedger(fromMysql2(pool), { table: 'ledger_first_burst' });
    const runs = await Promise.all(
      Array.from({ length: 12 }, (_, i) =>
        ledger.run(`payment:PAY_BURST_${i}:SUCCESS`, () => undefined, { raiseMark: false, completedTtlMs: 60_000 }),
      ),
    );
    expect(runs.map((run) => run.outcome)).toEqual(Array.from({ length: 12 }, () => 'processed'));
  });

  it.each([
    ['runOnce (no time limit)', undefined],
    ['the webhook handler (handlerTimeoutMs)', 10_000],
  ])(
    'work that rolled tx back is not acknowledged as processed (the check travels with COMMIT), and the retry runs it: %s',
    async (_, timeoutMs) => {
      const ledger = await newLedger(fromMysql2(pool));
      const payment = `PAY_WORK_ENDS_TX_${timeoutMs ?? 0}`;
      const first = await ledger.run(
        `payment:${payment}:SUCCESS`,
        async (tx) => {
          await tx.query('ROLLBACK');
          // A write after the work's own ROLLBACK: it must not commit as if the callback were handled.
          await tx.query('INSERT INTO fulfilments (payment_id) VALUES (?)', [payment]);
        },
        { raiseMark: false, completedTtlMs: 60_000, timeoutMs },
      );
      expect(first.outcome).toBe('failed');
      expect(await fulfilments(payment)).toBe(0);
      let ran = false;
      const retry = await ledger.run(`payment:${payment}:SUCCESS`, () => void (ran = true), {
        raiseMark: false,
        completedTtlMs: 60_000,
      });
      expect(retry.outcome).toBe('processed');
      expect(ran).toBe(true);
    },
  );
});
