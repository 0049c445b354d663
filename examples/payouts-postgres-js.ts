/**
 * Payouts exactly once on postgres.js (docs/payouts.md): the seller's debit and the staged payout
 * commit together; the worker sends it once; a refusal or a FAILED payout credits the seller back
 * in the transaction that records it. `tx` is a reserved connection inside BEGIN … COMMIT, used as
 * a tagged template.
 */
import type { ReservedSql, Sql } from 'postgres';
import type { MyrGateway } from 'myr-gateway';
import { SqlLedger, SqlPayouts, fromPostgresJs } from 'myr-gateway/sql';
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

export async function createPayouts(sql: Sql, gateway: MyrGateway, apiKey: string) {
  const markPayout = (tx: ReservedSql, referenceId: string, status: string) =>
    tx`UPDATE seller_payouts SET status = ${status} WHERE reference_id = ${referenceId}`;
  const creditBack = async (tx: ReservedSql, referenceId: string, status: string) => {
    await tx`UPDATE wallets SET balance = balance + p.amount FROM seller_payouts p
             WHERE p.reference_id = ${referenceId} AND wallets.seller = p.seller`;
    await markPayout(tx, referenceId, status);
  };
  const payouts = new SqlPayouts(fromPostgresJs(sql), {
    onRefused: (refusal, { tx }) => creditBack(tx, refusal.referenceId, 'refused'),
    onSettled: async (settlement, { tx }) => {
      if (settlement.state === 'failed') await creditBack(tx, settlement.referenceId, 'failed');
      else await markPayout(tx, settlement.referenceId, 'paid');
    },
  });
  await payouts.ensureSchema();
  const ledger = new SqlLedger(fromPostgresJs(sql));
  await ledger.ensureSchema();

  /** Debits the seller and stages the payout in one transaction: both happen, or neither. */
  const payOut = (request: PayoutRequest) =>
    payouts.transaction(async ({ tx }) => {
      const debited = await tx`UPDATE wallets SET balance = balance - ${request.amount}
                               WHERE seller = ${request.seller} AND balance >= ${request.amount}`;
      if (debited.count !== 1) throw new Error(`the balance of ${request.seller} is short of ${request.amount}`);
      await tx`INSERT INTO seller_payouts (reference_id, seller, amount, status)
               VALUES (${request.referenceId}, ${request.seller}, ${request.amount}, 'pending')`;
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
