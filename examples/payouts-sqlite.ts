/**
 * Payouts exactly once on SQLite (`node:sqlite`, docs/payouts.md): the seller's debit and the
 * staged payout commit together; the worker sends it once; a refusal or a FAILED payout credits
 * the seller back in the transaction that records it. `tx` is the `DatabaseSync`.
 */
import type { DatabaseSync } from 'node:sqlite';
import type { MyrGateway } from 'myr-gateway';
import { SqlLedger, SqlPayouts, fromSqlite } from 'myr-gateway/sql';
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

export async function createPayouts(file: string, gateway: MyrGateway, apiKey: string) {
  const client = fromSqlite(file);
  const markPayout = (tx: DatabaseSync, referenceId: string, status: string) =>
    void tx.prepare('UPDATE seller_payouts SET status = ? WHERE reference_id = ?').run(status, referenceId);
  const creditBack = (tx: DatabaseSync, referenceId: string, status: string) => {
    tx.prepare(
      'UPDATE wallets SET balance = balance + (SELECT amount FROM seller_payouts p WHERE p.reference_id = ?1) WHERE seller = (SELECT seller FROM seller_payouts p WHERE p.reference_id = ?1)',
    ).run(referenceId);
    markPayout(tx, referenceId, status);
  };
  const payouts = new SqlPayouts(client, {
    onRefused: (refusal, { tx }) => creditBack(tx, refusal.referenceId, 'refused'),
    onSettled: (settlement, { tx }) =>
      settlement.state === 'failed'
        ? creditBack(tx, settlement.referenceId, 'failed')
        : markPayout(tx, settlement.referenceId, 'paid'),
  });
  await payouts.ensureSchema();
  const ledger = new SqlLedger(client);
  await ledger.ensureSchema();

  /** Debits the seller and stages the payout in one transaction: both happen, or neither. */
  const payOut = (request: PayoutRequest) =>
    payouts.transaction(async ({ tx }) => {
      const debited = tx
        .prepare('UPDATE wallets SET balance = balance - ?1 WHERE seller = ?2 AND balance >= ?1')
        .run(request.amount, request.seller);
      if (Number(debited.changes) !== 1)
        throw new Error(`the balance of ${request.seller} is short of ${request.amount}`);
      tx.prepare("INSERT INTO seller_payouts (reference_id, seller, amount, status) VALUES (?, ?, ?, 'pending')").run(
        request.referenceId,
        request.seller,
        request.amount,
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
