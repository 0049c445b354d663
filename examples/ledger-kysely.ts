/**
 * The SQL ledger on Kysely (PostgresDialect or MysqlDialect): `tx` is Kysely's
 * ControlledTransaction, typed with your database (docs/ledger.md).
 */
import type { Kysely } from 'kysely';
import { SqlLedger, fromKysely } from 'myr-gateway/sql';
import { createWebhookHandler } from 'myr-gateway/webhooks';

export interface ShopDatabase {
  orders: { reference_id: string; status: string };
}

export async function createReceiver(db: Kysely<ShopDatabase>, apiKey: string) {
  const ledger = new SqlLedger(fromKysely(db));
  await ledger.ensureSchema();
  const handler = createWebhookHandler({
    verifier: { apiKey },
    store: ledger,
    onEvent: async (event, { tx }) => {
      await tx
        .updateTable('orders')
        .set({ status: 'paid' })
        .where('reference_id', '=', event.signed.reference_id)
        .execute();
    },
  });
  return { ledger, handler };
}
