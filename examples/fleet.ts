/**
 * Many instances behind a load balancer (pods, serverless functions): one Redis makes them
 * behave as one client. RedisTokenStore shares the access token (one POST /auth/token for
 * the fleet, under the 5-a-minute limit); RedisWebhookStore is the exactly-once ledger, so a
 * callback retried onto another instance is not handled twice. Bring your own ioredis (or
 * node-redis) client; protect that Redis like the api key (it holds the token).
 */
import express from 'express';
import type { Redis } from 'ioredis';
import { MyrGateway } from 'myr-gateway';
import { RedisTokenStore, RedisWebhookStore } from 'myr-gateway/redis';
import { createExpressMiddleware } from 'myr-gateway/webhooks';
import { handleEvent } from './shop.js';

/** Your settings (from the environment or a secret manager). */
export interface FleetSettings {
  baseUrl: string;
  merchantId: string;
  apiKey: string;
}

/** One instance of the fleet: its client and its callback route, both on the shared Redis. */
export function createInstance(redis: Redis, settings: FleetSettings): { gateway: MyrGateway; app: express.Express } {
  const gateway = new MyrGateway({ ...settings, tokenStore: new RedisTokenStore({ client: redis }) });
  const app = express();
  app.post(
    '/webhooks/myr',
    createExpressMiddleware({
      verifier: { apiKey: settings.apiKey },
      store: new RedisWebhookStore({ client: redis }), // Redis down: 503, and the gateway retries later
      onEvent: (event) => handleEvent(event, gateway),
    }),
  );
  return { gateway, app };
}
