/**
 * Next.js App Router route handler: app/api/webhooks/myr/route.ts
 * (the same handler serves Bun.serve, Deno.serve and Cloudflare Workers' fetch).
 *
 * Configure a shared WebhookStore (for example Redis) in production: serverless instances do
 * not share memory, so the default in-memory store cannot deduplicate across them.
 */
import { MyrGateway } from 'myr-gateway';
import { confirmDeposit, createWebHandler } from 'myr-gateway/webhooks';

const gateway = new MyrGateway({
  baseUrl: process.env.MYR_BASE_URL ?? 'https://api.gateway.example/api/v1',
  merchantId: process.env.MYR_MERCHANT_ID ?? '',
  apiKey: process.env.MYR_API_KEY ?? '',
});

declare const orders: {
  get(referenceId: string): Promise<{ id: string; total: number }>;
  markPaid(id: string): Promise<void>;
  markPayout(referenceId: string, status: string): Promise<void>;
};

export const POST = createWebHandler({
  verifier: { apiKey: process.env.MYR_API_KEY ?? '' },
  async onEvent(event) {
    switch (event.transaction_type) {
      case 'DEPOSIT': {
        if (event.signed.status !== 'SUCCESS') return;
        const order = await orders.get(event.signed.reference_id);
        const check = await confirmDeposit(event, gateway, { amount: order.total });
        if (!check.confirmed) throw new Error(`deposit not confirmed: ${check.mismatches.join(', ')}`);
        await orders.markPaid(order.id);
        return;
      }
      case 'WITHDRAWAL':
        await orders.markPayout(event.signed.reference_id, event.signed.status);
        return;
    }
  },
});
