/**
 * Payouts exactly once on node-postgres (docs/payouts.md): the seller's debit and the staged
 * payout commit together; the worker sends it once; a refusal or a FAILED payout credits the
 * seller back in the transaction that records it. `tx` is the pg `PoolClient`.
 */
import type pg from 'pg';
import type { MyrGateway } from 'myr-gateway';
import { SqlLedger, SqlPayouts, fromPg } from 'myr-gateway/sql';
import { createWebhookHandler } from 'myr-gateway/webhooks';

/** The seller's payout request: who, how much, where. */
export interface PayoutRequest {
  seller: string;
  amount: string;
  referenceId: string;
  bankCode: string;
  accountNumber: string;
  accountName: string;
}

export async function createPayouts(pool: pg.Pool, gateway: MyrGateway, apiKey: string) {
  const creditBack = (tx: pg.PoolClient, referenceId: string, status: string) =>
    tx
      .query(
        'UPDATE wallets SET balance = balance + p.amount FROM seller_payouts p WHERE p.reference_id = $1 AND wallets.seller = p.seller',
        [referenceId],
      )
      .then(() => markPayout(tx, referenceId, status));
  const markPayout = (tx: pg.PoolClient, referenceId: string, status: string) =>
    tx.query('UPDATE seller_payouts SET status = $2 WHERE reference_id = $1', [referenceId, status]);
  const payouts = new SqlPayouts(fromPg(pool), {
    onRefused: async (refusal, { tx }) => void (await creditBack(tx, refusal.referenceId, 'refused')),
    onSettled: async (settlement, { tx }) => {
      if (settlement.state === 'failed') await creditBack(tx, settlement.referenceId, 'failed');
      else await markPayout(tx, settlement.referenceId, 'paid');
    },
  });
  await payouts.ensureSchema();
  const ledger = new SqlLedger(fromPg(pool));
  await ledger.ensureSchema();

  /** Debits the seller and stages the payout in one transaction: both happen, or neither. */
  const payOut = (request: PayoutRequest) =>
    payouts.transaction(async ({ tx }) => {
      const debited = await tx.query('UPDATE wallets SET balance = balance - $1 WHERE seller = $2 AND balance >= $1', [
        request.amount,
        request.seller,
      ]);
      if (debited.rowCount !== 1) throw new Error(`the balance of ${request.seller} is short of ${request.amount}`);
      await tx.query(
        "INSERT INTO seller_payouts (reference_id, seller, amount, status) VALUES ($1, $2, $3, 'pending')",
        [request.referenceId, request.seller, request.amount],
      );
      await payouts.stage(tx, {
        amount: request.amount,
        reference_id: request.referenceId,
        bank_code: request.bankCode,
        account_number: request.accountNumber,
        account_name: request.accountName,
      });
    });

  /** The callback receiver: withdrawals settle their payout, once. */
  const handler = createWebhookHandler({
    verifier: { apiKey },
    store: ledger,
    onEvent: async (event, { tx }) => {
      if (event.transaction_type === 'WITHDRAWAL') await payouts.settle(event, { tx });
    },
  });

  const worker = payouts.worker(gateway, { intervalMs: 1000, settleAfterMs: 600_000 });
  return { payouts, payOut, handler, worker };
}
