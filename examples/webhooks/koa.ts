/**
 * Koa (2 or 3): the middleware answers POST /webhooks/myr and passes every other request on.
 * Run it: `app.listen(3000)`.
 */
import Koa from 'koa';
import { createKoaMiddleware } from 'myr-gateway/webhooks';
import { apiKey, handleEvent } from '../shop.js';

export const app = new Koa();
app.use(
  createKoaMiddleware(
    { verifier: { apiKey: apiKey() }, onEvent: (event) => handleEvent(event) },
    { path: '/webhooks/myr' },
  ),
);
