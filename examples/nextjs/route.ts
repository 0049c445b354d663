/**
 * Next.js App Router route handler: app/api/webhooks/myr/route.ts
 * (the same Web-standard handler serves Bun.serve, Deno.serve and Cloudflare Workers' fetch).
 *
 * The client is created at module scope: `next build` imports route modules with no secrets in
 * the environment, and `new MyrGateway()` never throws for a missing MYR_GATEWAY_* variable (it
 * fails the first call, loudly, with a ConfigurationError). The webhook handler is built on the
 * first request, because a verifier without its key refuses to be built.
 *
 * Configure a shared WebhookStore (for example Redis) in production: serverless instances do
 * not share memory, so the default in-memory store cannot deduplicate across them.
 */
import { MyrGateway } from 'myr-gateway';
import { confirmDeposit, createWebHandler } from 'myr-gateway/webhooks';

declare const orders: {
  get(referenceId: string): Promise<{ id: string; total: string }>;
  markPaid(id: string): Promise<void>;
  markPayout(referenceId: string, status: string): Promise<void>;
};

// Reads MYR_GATEWAY_BASE_URL, MYR_GATEWAY_MERCHANT_ID and MYR_GATEWAY_API_KEY.
const gateway = new MyrGateway();

let handle: ((request: Request) => Promise<Response>) | undefined;

export async function POST(request: Request): Promise<Response> {
  handle ??= createWebHandler({
    verifier: { apiKey: process.env.MYR_GATEWAY_API_KEY ?? '' },
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
  return handle(request);
}
