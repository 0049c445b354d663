/**
 * Payouts exactly once on Prisma 7 (a client generated with the `prisma-client` generator and
 * @prisma/adapter-pg; docs/payouts.md): the seller's debit and the staged payout commit together;
 * the worker sends it once; a refusal or a FAILED payout credits the seller back in the
 * transaction that records it. `tx` is Prisma's transaction client, so the debit and the credit
 * are your models' own queries. In your code `prisma` is your generated `PrismaClient`;
 * `ShopPrisma` names the part of it used here, so that the example type-checks without a
 * generated client. The models:
 *
 * ```prisma
 * model Wallet {
 *   seller  String  @id @db.VarChar(40)
 *   balance Decimal @db.Decimal(12, 2)
 *   @@map("wallets")
 * }
 * model SellerPayout {
 *   reference_id String  @id @db.VarChar(100)
 *   seller       String  @db.VarChar(40)
 *   amount       Decimal @db.Decimal(12, 2)
 *   status       String  @db.VarChar(16)
 *   @@map("seller_payouts")
 * }
 * ```
 */
import type { MyrGateway } from 'myr-gateway';
import { SqlLedger, SqlPayouts, fromPrisma, type PrismaTransactionLike } from 'myr-gateway/sql';
import { createWebhookHandler } from 'myr-gateway/webhooks';

/** A `Decimal` of your generated client, as these queries use it. */
type Decimal = { toString(): string };

/** Your generated client's transaction client, as far as the payouts use its models. */
export type ShopTx = PrismaTransactionLike & {
  wallet: {
    updateMany(args: {
      where: { seller: string; balance: { gte: string } };
      data: { balance: { decrement: string } };
    }): PromiseLike<{ count: number }>;
    update(args: { where: { seller: string }; data: { balance: { increment: Decimal } } }): PromiseLike<unknown>;
  };
  sellerPayout: {
    create(args: {
      data: { reference_id: string; seller: string; amount: string; status: string };
    }): PromiseLike<unknown>;
    update(args: {
      where: { reference_id: string };
      data: { status: string };
    }): PromiseLike<{ seller: string; amount: Decimal }>;
  };
};

/** Your generated `PrismaClient`, as far as the payouts use it. */
export interface ShopPrisma {
  $transaction(
    fn: (tx: ShopTx) => Promise<unknown>,
    options?: { timeout?: number; isolationLevel?: 'ReadCommitted' },
  ): PromiseLike<unknown>;
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

export async function createPayouts(prisma: ShopPrisma, gateway: MyrGateway, apiKey: string) {
  const markPayout = (tx: ShopTx, referenceId: string, status: string) =>
    tx.sellerPayout.update({ where: { reference_id: referenceId }, data: { status } });
  const creditBack = async (tx: ShopTx, referenceId: string, status: string) => {
    const payout = await markPayout(tx, referenceId, status);
    await tx.wallet.update({ where: { seller: payout.seller }, data: { balance: { increment: payout.amount } } });
  };
  const payouts = new SqlPayouts(fromPrisma(prisma, 'postgres'), {
    onRefused: (refusal, { tx }) => creditBack(tx, refusal.referenceId, 'refused'),
    onSettled: async (settlement, { tx }) => {
      if (settlement.state === 'failed') await creditBack(tx, settlement.referenceId, 'failed');
      else await markPayout(tx, settlement.referenceId, 'paid');
    },
  });
  await payouts.ensureSchema();
  const ledger = new SqlLedger(fromPrisma(prisma, 'postgres'));
  await ledger.ensureSchema();

  /** Debits the seller and stages the payout in one transaction: both happen, or neither. */
  const payOut = (request: PayoutRequest) =>
    payouts.transaction(async ({ tx }) => {
      const debited = await tx.wallet.updateMany({
        where: { seller: request.seller, balance: { gte: request.amount } },
        data: { balance: { decrement: request.amount } },
      });
      if (debited.count !== 1) throw new Error(`the balance of ${request.seller} is short of ${request.amount}`);
      await tx.sellerPayout.create({
        data: { reference_id: request.referenceId, seller: request.seller, amount: request.amount, status: 'pending' },
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
