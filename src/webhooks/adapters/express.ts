/**
 * Express 4 and 5. Mount it on a POST route, with or without a body parser in front
 * (`express.json()`, `express.raw()`, `express.text()` or none all work).
 *
 * @module
 */
import type { ServerResponse } from 'node:http';
import { createNodeHandler } from './node.js';
import type { NodeRequestLike, WebhookAdapterInput, WebhookAdapterOptions } from './shared.js';

/**
 * Express middleware that verifies the callback, runs `onEvent` exactly once and
 * answers the gateway. It always answers; it never calls `next`.
 *
 * @example
 * ```ts
 * import express from 'express';
 * import { createExpressMiddleware } from 'myr-gateway/webhooks';
 *
 * const app = express();
 * app.post('/webhooks/myr', createExpressMiddleware({
 *   verifier: { apiKey: process.env.MYR_API_KEY! },
 *   async onEvent(event) { … },
 * }));
 * ```
 */
export function createExpressMiddleware<Tx = undefined>(
  input: WebhookAdapterInput<Tx>,
  options?: WebhookAdapterOptions,
): (req: NodeRequestLike, res: ServerResponse, next?: (error?: unknown) => void) => void {
  // Express hands over node:http's req and res; the answer never goes through `next`.
  return createNodeHandler(input, options);
}
