/**
 * The SQL ledger on postgres.js: `tx` is a reserved connection inside BEGIN … COMMIT, used as a
 * tagged template (docs/ledger.md).
 */
import type { Sql } from 'postgres';
import { SqlLedger, fromPostgresJs } from 'myr-gateway/sql';
import { createWebhookHandler } from 'myr-gateway/webhooks';

export async function createReceiver(sql: Sql, apiKey: string) {
  const ledger = new SqlLedger(fromPostgresJs(sql));
  await ledger.ensureSchema();
  const handler = createWebhookHandler({
    verifier: { apiKey },
    store: ledger,
    onEvent: async (event, { tx }) => {
      await tx`UPDATE orders SET status = 'paid' WHERE reference_id = ${event.signed.reference_id}`;
    },
  });
  return { ledger, handler };
}
