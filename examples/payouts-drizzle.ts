/**
 * Payouts exactly once on Drizzle over node-postgres (docs/payouts.md): the seller's debit and the
 * staged payout commit together; the worker sends it once; a refusal or a FAILED payout credits
 * the seller back in the transaction that records it. `tx` is Drizzle's transaction, so the debit
 * and the credit are Drizzle's own queries.
 */
import { and, eq, gte, sql } from 'drizzle-orm';
import type { NodePgDatabase } from 'drizzle-orm/node-postgres';
import { numeric, pgTable, varchar } from 'drizzle-orm/pg-core';
import type { MyrGateway } from 'myr-gateway';
import { SqlLedger, SqlPayouts, fromDrizzle, type DrizzleTxOf } from 'myr-gateway/sql';
import { createWebhookHandler } from 'myr-gateway/webhooks';

export const wallets = pgTable('wallets', {
  seller: varchar('seller', { length: 40 }).primaryKey(),
  balance: numeric('balance', { precision: 12, scale: 2 }).notNull(),
});
export const sellerPayouts = pgTable('seller_payouts', {
  referenceId: varchar('reference_id', { length: 100 }).primaryKey(),
  seller: varchar('seller', { length: 40 }).notNull(),
  amount: numeric('amount', { precision: 12, scale: 2 }).notNull(),
  status: varchar('status', { length: 16 }).notNull(),
});

/** The seller's payout request: who, how much, where. */
export interface PayoutRequest {
  seller: string;
  amount: string;
  referenceId: string;
  bankCode: string;
  accountNumber: string;
  accountName: string;
}

type Tx = DrizzleTxOf<NodePgDatabase>;

export async function createPayouts(db: NodePgDatabase, gateway: MyrGateway, apiKey: string) {
  const markPayout = async (tx: Tx, referenceId: string, status: string) => {
    const [payout] = await tx
      .update(sellerPayouts)
      .set({ status })
      .where(eq(sellerPayouts.referenceId, referenceId))
      .returning({ seller: sellerPayouts.seller, amount: sellerPayouts.amount });
    if (!payout) throw new Error(`no seller payout ${referenceId}`);
    return payout;
  };
  const creditBack = async (tx: Tx, referenceId: string, status: string) => {
    const payout = await markPayout(tx, referenceId, status);
    await tx
      .update(wallets)
      .set({ balance: sql`${wallets.balance} + ${payout.amount}` })
      .where(eq(wallets.seller, payout.seller));
  };
  const payouts = new SqlPayouts(fromDrizzle(db), {
    onRefused: (refusal, { tx }) => creditBack(tx, refusal.referenceId, 'refused'),
    onSettled: async (settlement, { tx }) => {
      if (settlement.state === 'failed') await creditBack(tx, settlement.referenceId, 'failed');
      else await markPayout(tx, settlement.referenceId, 'paid');
    },
  });
  await payouts.ensureSchema();
  const ledger = new SqlLedger(fromDrizzle(db));
  await ledger.ensureSchema();

  /** Debits the seller and stages the payout in one transaction: both happen, or neither. */
  const payOut = (request: PayoutRequest) =>
    payouts.transaction(async ({ tx }) => {
      const debited = await tx
        .update(wallets)
        .set({ balance: sql`${wallets.balance} - ${request.amount}` })
        .where(and(eq(wallets.seller, request.seller), gte(wallets.balance, request.amount)));
      if (debited.rowCount !== 1) throw new Error(`the balance of ${request.seller} is short of ${request.amount}`);
      await tx.insert(sellerPayouts).values({
        referenceId: request.referenceId,
        seller: request.seller,
        amount: request.amount,
        status: 'pending',
      });
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
