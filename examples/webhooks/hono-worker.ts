/**
 * Hono on Cloudflare Workers: a Worker module exporting `fetch`. Workers have no
 * process.env: the credentials come from the environment bindings (`wrangler secret put
 * MYR_GATEWAY_API_KEY`, …), so the client and the handler are built on the first request
 * of each isolate and reused after that (the signing key is derived once).
 *
 * Callbacks are deduplicated in memory per isolate; give `store` a shared WebhookStore
 * (Durable Object, KV with care, or Redis) when several isolates take callbacks.
 */
import { Hono } from 'hono';
import { MyrGateway } from 'myr-gateway';
import { createHonoHandler, type HonoContextLike } from 'myr-gateway/webhooks';
import { handleEvent } from '../shop.js';

/** The Worker's bindings (wrangler.toml `[vars]` and secrets). */
export interface Env {
  MYR_GATEWAY_BASE_URL: string;
  MYR_GATEWAY_MERCHANT_ID: string;
  MYR_GATEWAY_API_KEY: string;
}

const app = new Hono<{ Bindings: Env }>();
let handle: ((c: HonoContextLike) => Promise<Response>) | undefined;

app.post('/webhooks/myr', (c) => {
  if (!handle) {
    const { MYR_GATEWAY_BASE_URL: baseUrl, MYR_GATEWAY_MERCHANT_ID: merchantId, MYR_GATEWAY_API_KEY: apiKey } = c.env;
    const client = new MyrGateway({ baseUrl, merchantId, apiKey });
    handle = createHonoHandler({ verifier: { apiKey }, onEvent: (event) => handleEvent(event, client) });
  }
  return handle(c);
});

export default { fetch: app.fetch };
