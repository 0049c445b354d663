/**
 * Payouts exactly once on Kysely (PostgresDialect; docs/payouts.md): the seller's debit and the
 * staged payout commit together; the worker sends it once; a refusal or a FAILED payout credits
 * the seller back in the transaction that records it. `tx` is Kysely's transaction, typed with
 * your database, so the debit and the credit are Kysely's own queries.
 */
import type { Kysely, Transaction } from 'kysely';
import type { MyrGateway } from 'myr-gateway';
import { SqlLedger, SqlPayouts, fromKysely } from 'myr-gateway/sql';
import { createWebhookHandler } from 'myr-gateway/webhooks';

/** Your tables (Postgres answers a NUMERIC as a string). */
export interface ShopDatabase {
  wallets: { seller: string; balance: string };
  seller_payouts: { reference_id: string; seller: string; amount: string; status: string };
}

/** The seller's payout request: who, how much, where. */
export interface PayoutRequest {
  seller: string;
  amount: string;
  referenceId: string;
  bankCode: string;
  accountNumber: string;
  accountName: string;
}

export async function createPayouts(db: Kysely<ShopDatabase>, gateway: MyrGateway, apiKey: string) {
  const markPayout = (tx: Transaction<ShopDatabase>, referenceId: string, status: string) =>
    tx
      .updateTable('seller_payouts')
      .set({ status })
      .where('reference_id', '=', referenceId)
      .returning(['seller', 'amount'])
      .executeTakeFirstOrThrow();
  const creditBack = async (tx: Transaction<ShopDatabase>, referenceId: string, status: string) => {
    const payout = await markPayout(tx, referenceId, status);
    await tx
      .updateTable('wallets')
      .set((eb) => ({ balance: eb('balance', '+', payout.amount) }))
      .where('seller', '=', payout.seller)
      .execute();
  };
  const payouts = new SqlPayouts(fromKysely(db), {
    onRefused: (refusal, { tx }) => creditBack(tx, refusal.referenceId, 'refused'),
    onSettled: async (settlement, { tx }) => {
      if (settlement.state === 'failed') await creditBack(tx, settlement.referenceId, 'failed');
      else await markPayout(tx, settlement.referenceId, 'paid');
    },
  });
  await payouts.ensureSchema();
  const ledger = new SqlLedger(fromKysely(db));
  await ledger.ensureSchema();

  /** Debits the seller and stages the payout in one transaction: both happen, or neither. */
  const payOut = (request: PayoutRequest) =>
    payouts.transaction(async ({ tx }) => {
      const debited = await tx
        .updateTable('wallets')
        .set((eb) => ({ balance: eb('balance', '-', request.amount) }))
        .where('seller', '=', request.seller)
        .where('balance', '>=', request.amount)
        .executeTakeFirst();
      if (debited.numUpdatedRows !== 1n)
        throw new Error(`the balance of ${request.seller} is short of ${request.amount}`);
      await tx
        .insertInto('seller_payouts')
        .values({
          reference_id: request.referenceId,
          seller: request.seller,
          amount: request.amount,
          status: 'pending',
        })
        .execute();
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
