/**
 * The SUCCESS callbacks node-postgres's opening tests deliver (opening-round-trip.test.ts,
 * opening-faults.test.ts): each fulfils its payment with one row in `orders`, through `tx`, so
 * counting a payment's rows says how many times it was fulfilled; a run that holds a payment's row
 * while another waits on it; and two ledgers on one table, one to hold and one to wait.
 */
import pg from 'pg';
import { fromPg, type SqlLedger } from '../../../../src/sql/index.js';
import type { LedgerRun } from '../../../../src/webhooks/index.js';
import { lifecycleRank } from '../../../../src/webhooks/lifecycle.js';
import { newLedger } from '../scenarios.js';

/** The table the handlers write: create it once per database. */
export const ORDERS_TABLE = 'CREATE TABLE orders (payment_id TEXT NOT NULL)';

/** A SUCCESS callback's run options, as the webhook handler gives them (`timeoutMs`: handlerTimeoutMs). */
export const success = (payment: string, timeoutMs?: number) =>
  ({
    raiseMark: false,
    completedTtlMs: 86_400_000,
    order: { paymentId: payment, rank: lifecycleRank('SUCCESS') },
    timeoutMs,
  }) as const;

/** The handler that fulfils `payment`: one row in `orders`, written through `tx`. */
export const fulfil = (payment: string) => async (tx: pg.PoolClient) =>
  void (await tx.query('INSERT INTO orders (payment_id) VALUES ($1)', [payment]));

/** How many times `payment` was fulfilled, as committed. */
export const ordersOf = async (pool: pg.Pool, payment: string): Promise<number> =>
  Number((await pool.query('SELECT count(*) AS n FROM orders WHERE payment_id = $1', [payment])).rows[0].n);

/** `payment`'s SUCCESS callback delivered to `ledger` with the fulfilling handler: the run's outcome. */
export const deliver = async (
  ledger: SqlLedger<pg.PoolClient>,
  payment: string,
  timeoutMs?: number,
): Promise<LedgerRun<void>['outcome']> =>
  (await ledger.run(`payment:${payment}:SUCCESS`, fulfil(payment), success(payment, timeoutMs))).outcome;

/** A run of `payment` whose handler wrote and then waits: it holds the payment's row until released. */
export async function hold(ledger: SqlLedger<pg.PoolClient>, payment: string) {
  let release!: () => void;
  const gate = new Promise<void>((resolve) => (release = resolve));
  let started!: () => void;
  const running = new Promise<void>((resolve) => (started = resolve));
  const held = ledger.run(
    `payment:${payment}:SUCCESS`,
    async (tx) => {
      await fulfil(payment)(tx);
      started();
      await gate;
    },
    success(payment),
  );
  await running;
  return { release, held };
}

/**
 * Two ledgers on one table of the database at `url`: `first`'s pool holds a payment's row,
 * `second`'s one connection (with the waiter's options) waits on it; both pools end after `body`.
 */
export async function holderAndWaiter(
  url: string,
  waiterOptions: { readonly lockTimeoutMs: number; readonly prepare?: boolean; readonly queryTimeoutMs?: number },
  body: (ledgers: { first: SqlLedger<pg.PoolClient>; second: SqlLedger<pg.PoolClient> }) => Promise<void>,
): Promise<void> {
  const holding = new pg.Pool({ connectionString: url, max: 1 });
  const waiting = new pg.Pool({
    connectionString: url,
    max: 1,
    ...(waiterOptions.queryTimeoutMs === undefined ? {} : { query_timeout: waiterOptions.queryTimeoutMs }),
  });
  try {
    const first = await newLedger(fromPg(holding));
    const second = await newLedger(fromPg(waiting, { prepare: waiterOptions.prepare ?? true }), {
      table: first.table,
      lockTimeoutMs: waiterOptions.lockTimeoutMs,
    });
    await body({ first, second });
  } finally {
    await holding.end();
    await waiting.end();
  }
}
