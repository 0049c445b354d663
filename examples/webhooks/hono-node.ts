/**
 * Hono on Node: the same Hono route as on Bun, Deno or Workers, served by @hono/node-server.
 * Run it: `serve({ fetch: app.fetch, port: 3000 })` from '@hono/node-server'.
 */
import { Hono } from 'hono';
import { createHonoHandler } from 'myr-gateway/webhooks';
import { apiKey, handleEvent } from '../shop.js';

export const app = new Hono();
app.post(
  '/webhooks/myr',
  createHonoHandler({ verifier: { apiKey: apiKey() }, onEvent: (event) => handleEvent(event) }),
);
