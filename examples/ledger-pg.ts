/**
 * The SQL ledger on node-postgres: the callback's claim, the order update and the record that it
 * was handled commit in one transaction (docs/ledger.md). `tx` is the pg `PoolClient`.
 */
import type pg from 'pg';
import { SqlLedger, fromPg } from 'myr-gateway/sql';
import { createWebhookHandler, paymentKey, runOnce } from 'myr-gateway/webhooks';

export async function createReceiver(pool: pg.Pool, apiKey: string) {
  const ledger = new SqlLedger(fromPg(pool));
  await ledger.ensureSchema();
  const markPaid = (tx: pg.PoolClient, referenceId: string) =>
    tx.query("UPDATE orders SET status = 'paid' WHERE reference_id = $1", [referenceId]);
  const handler = createWebhookHandler({
    verifier: { apiKey },
    store: ledger,
    onEvent: async (event, { tx }) => void (await markPaid(tx, event.signed.reference_id)),
  });
  /** The reconciliation job's fulfilment of a status record: never a second one. */
  const reconcile = (status: { payment_id: string; reference_id: string; status: string }) =>
    runOnce(ledger, paymentKey(status.payment_id, status.status), ({ tx }) => markPaid(tx, status.reference_id), {
      payment: status,
    });
  return { ledger, handler, reconcile };
}
