/**
 * The SQL ledger on mysql2 (MySQL 8, MariaDB 10.11): `tx` is the `PoolConnection`, autocommit
 * off until the ledger commits (docs/ledger.md).
 */
import type { Pool } from 'mysql2/promise';
import { SqlLedger, fromMysql2 } from 'myr-gateway/sql';
import { createWebhookHandler } from 'myr-gateway/webhooks';

export async function createReceiver(pool: Pool, apiKey: string) {
  const ledger = new SqlLedger(fromMysql2(pool));
  await ledger.ensureSchema();
  const handler = createWebhookHandler({
    verifier: { apiKey },
    store: ledger,
    onEvent: async (event, { tx }) => {
      await tx.query("UPDATE orders SET status = 'paid' WHERE reference_id = ?", [event.signed.reference_id]);
    },
  });
  return { ledger, handler };
}
