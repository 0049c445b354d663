/**
 * Kysely and Drizzle check before COMMIT that the row the run claimed still holds the run's own
 * `claim_id`. Work that sends `write; COMMIT` through tx lets the payment's row go, and the
 * payment's REFUNDED may claim it then, with an id of its own: a run that claimed in the payment's
 * row would be answered failed (500) though its claim and first write committed, and what it
 * wrote after a BEGIN of its own would be rolled back and never written (the retry superseded). So
 * on these clients a payment outcome's run keeps a row of its own, which no other run claims:
 * answered processed, as after a COMMIT with nothing beside it (orm-work-ends-tx.test.ts). Real
 * PostgreSQL 15.
 */
import { sql as drizzleSql } from 'drizzle-orm';
import { drizzle } from 'drizzle-orm/node-postgres';
import { Kysely, PostgresDialect, sql as kyselySql } from 'kysely';
import { expect, it } from 'vitest';
import { SqlLedger, fromDrizzle, fromKysely, type SqlClient } from '../../../src/sql/index.js';
import { paymentKey, runOnce, WebhookHandlerError } from '../../../src/webhooks/index.js';
import { postgresForFile } from '../../helpers/database-for-file.js';

const db = postgresForFile(6, (pool) => pool.query('CREATE TABLE orders (k text)'));

const orms: Record<
  string,
  { client: () => SqlClient<unknown>; send: (tx: unknown, text: string) => Promise<unknown> }
> = {
  Kysely: {
    client: () => fromKysely(new Kysely<Record<string, never>>({ dialect: new PostgresDialect({ pool: db.pool }) })),
    send: (tx, text) => kyselySql.raw(text).execute(tx as Kysely<Record<string, never>>),
  },
  Drizzle: {
    client: () => fromDrizzle(drizzle(db.pool)),
    send: (tx, text) => (tx as ReturnType<typeof drizzle>).execute(drizzleSql.raw(text)),
  },
};

const orders = async (k: string) =>
  (await db.pool.query<{ n: number }>('SELECT count(*)::int AS n FROM orders WHERE k = $1', [k])).rows[0]?.n;

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
    // As without the REFUNDED beside it (orm-work-ends-tx.test.ts): 200, and the redelivery does
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
