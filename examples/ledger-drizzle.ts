/**
 * The SQL ledger on Drizzle over node-postgres: `tx` is Drizzle's transaction (docs/ledger.md).
 * Over mysql2 it is the same, with drizzle-orm/mysql2 and a mysqlTable.
 */
import { eq } from 'drizzle-orm';
import type { NodePgDatabase } from 'drizzle-orm/node-postgres';
import { pgTable, text } from 'drizzle-orm/pg-core';
import { SqlLedger, fromDrizzle } from 'myr-gateway/sql';
import { createWebhookHandler } from 'myr-gateway/webhooks';

export const orders = pgTable('orders', { reference_id: text('reference_id').primaryKey(), status: text('status') });

export async function createReceiver(db: NodePgDatabase, apiKey: string) {
  const ledger = new SqlLedger(fromDrizzle(db));
  await ledger.ensureSchema();
  const handler = createWebhookHandler({
    verifier: { apiKey },
    store: ledger,
    onEvent: async (event, { tx }) => {
      await tx.update(orders).set({ status: 'paid' }).where(eq(orders.reference_id, event.signed.reference_id));
    },
  });
  return { ledger, handler };
}
