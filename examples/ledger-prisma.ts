/**
 * The SQL ledger on Prisma 7 (a client generated with the `prisma-client` generator and a driver
 * adapter: @prisma/adapter-pg, or @prisma/adapter-mariadb for MySQL): `tx` is Prisma's
 * transaction client, so the order's update commits with the callback's record (docs/ledger.md).
 * In your code `prisma` is your generated `PrismaClient`; `ShopPrisma` names the part of it this
 * receiver uses, so that the example type-checks without a generated client.
 */
import { SqlLedger, fromPrisma, type PrismaTransactionLike } from 'myr-gateway/sql';
import { createWebhookHandler } from 'myr-gateway/webhooks';

/** Your generated client's `order` model (`model Order { reference_id String @id  status String? }`). */
export interface ShopPrisma {
  $transaction(
    fn: (
      tx: PrismaTransactionLike & {
        order: { update(args: { where: { reference_id: string }; data: { status: string } }): PromiseLike<unknown> };
      },
    ) => Promise<unknown>,
    options?: { timeout?: number; isolationLevel?: 'ReadCommitted' },
  ): PromiseLike<unknown>;
}

export async function createReceiver(prisma: ShopPrisma, apiKey: string) {
  const ledger = new SqlLedger(fromPrisma(prisma, 'postgres'));
  await ledger.ensureSchema();
  const handler = createWebhookHandler({
    verifier: { apiKey },
    store: ledger,
    onEvent: async (event, { tx }) => {
      await tx.order.update({ where: { reference_id: event.signed.reference_id }, data: { status: 'paid' } });
    },
  });
  return { ledger, handler };
}
