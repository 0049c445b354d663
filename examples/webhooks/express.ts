/**
 * Express (4 or 5): the callback route. The middleware verifies the signature, runs
 * handleEvent exactly once per payment and status, and answers the gateway.
 * Run it: `app.listen(3000)` and give the gateway https://your-host/webhooks/myr.
 */
import express from 'express';
import { createExpressMiddleware } from 'myr-gateway/webhooks';
import { apiKey, handleEvent } from '../shop.js';

export const app = express();
app.use(express.json()); // optional: the middleware works with or without a body parser
app.post(
  '/webhooks/myr',
  createExpressMiddleware({ verifier: { apiKey: apiKey() }, onEvent: (event) => handleEvent(event) }),
);
