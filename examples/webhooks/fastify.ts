/**
 * Fastify (4 or 5): the plugin keeps the raw body for its own route only; the rest of your
 * app keeps Fastify's JSON parser. Run it: `await app.listen({ port: 3000 })`.
 */
import Fastify from 'fastify';
import { fastifyWebhookPlugin } from 'myr-gateway/webhooks';
import { apiKey, handleEvent } from '../shop.js';

export const app = Fastify();
await app.register(fastifyWebhookPlugin, {
  path: '/webhooks/myr',
  verifier: { apiKey: apiKey() },
  onEvent: (event) => handleEvent(event),
});
