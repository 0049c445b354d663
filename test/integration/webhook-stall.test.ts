/**
 * The default claim keeps a live handler's claim through a stall: a lease cannot tell a stall
 * from a crash, and a second fulfilment is worse than a late one (issue 22). A handler whose
 * event loop is blocked for 5 s (no renewal can run meanwhile) still holds its claim on real
 * Redis when it finishes, so no retry could have taken it; with the old 4 s default the claim
 * expired under it (CLAIM_LOST) and the gateway's retry ran the callback again elsewhere.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { RedisWebhookStore } from '../../src/redis/index.js';
import { signCallback } from '../../src/testing/index.js';
import { createWebhookHandler, type WebhookHandlerError } from '../../src/webhooks/index.js';
import { connect, RedisServer } from '../helpers/redis.js';

const API_KEY = 'sk_test_stall_0001';
let server: RedisServer;
let conn: Awaited<ReturnType<typeof connect>>;
beforeAll(async () => {
  server = await RedisServer.start();
  conn = await connect('ioredis', server.url);
});
afterAll(async () => {
  await conn?.close();
  await server?.stop();
});

it('on defaults, a handler stalled for 5 s keeps its claim: recorded as its own, and a retry after it is a duplicate', async () => {
  const store = new RedisWebhookStore({ client: conn.client, keyPrefix: 'stall:' });
  const errors: WebhookHandlerError[] = [];
  const runs: string[] = [];
  const handler = createWebhookHandler({
    verifier: { apiKey: API_KEY },
    store,
    onError: (error) => void errors.push(error as WebhookHandlerError),
    onEvent: (event) => {
      runs.push(event.signed.payment_id);
      const until = Date.now() + 5_000; // a blocked event loop: no renewal runs meanwhile
      while (Date.now() < until) {
        // stalled
      }
    },
  });
  const { rawBody, headers } = await signCallback(API_KEY, {
    payment_id: 'PAY_STALL_1',
    reference_id: 'ORDERSTALL1',
    amount: 10,
    status: 'SUCCESS',
  });
  const first = await handler.handle({ body: rawBody, headers });
  expect(first.body.outcome).toBe('processed');
  expect(errors.map((error) => error.code)).toEqual([]); // no CLAIM_LOST: nobody else could have taken it
  const retry = await handler.handle({ body: rawBody, headers });
  expect(retry.body.outcome).toBe('duplicate');
  expect(runs).toEqual(['PAY_STALL_1']);
}, 20_000);
