/**
 * Out-of-order callbacks: a SUCCESS delivered after the same payment's REFUNDED must not reach
 * fulfilment. It is acknowledged (200, so the gateway stops) with outcome `superseded`: an
 * outcome like a duplicate, not an error for `onError`. A reconciliation job's `runOnce` given the payment keeps the same order, with the
 * handler and on its own. In memory and on a real Redis through both clients.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RedisWebhookStore } from '../../src/redis/index.js';
import { signCallback } from '../../src/testing/index.js';
import { createWebhookHandler, MemoryWebhookStore, paymentKey, runOnce, type WebhookStore } from '../../src/webhooks/index.js';
import { CLIENT_KINDS, connect, RedisServer } from '../helpers/redis.js';
import { connectTarget, RedisClusterServers } from '../helpers/redis-topologies.js';

const API_KEY = 'sk_test_superseded_0001';
let server: RedisServer;
let cluster: RedisClusterServers;
const closers: (() => Promise<void>)[] = [];
beforeAll(async () => {
  [server, cluster] = await Promise.all([RedisServer.start(), RedisClusterServers.start()]);
}, 60_000);
afterAll(async () => {
  for (const close of closers) await close();
  await Promise.all([server?.stop(), cluster?.stop()]);
});

const stores: [string, () => Promise<WebhookStore>][] = [
  ['memory', () => Promise.resolve(new MemoryWebhookStore())],
  ...CLIENT_KINDS.map((kind): [string, () => Promise<WebhookStore>] => [
    `Redis on ${kind}`,
    async () => {
      const conn = await connect(kind, server.url);
      closers.push(conn.close);
      return new RedisWebhookStore({ client: conn.client, keyPrefix: `sup:${kind}:` });
    },
  ]),
  // On a Cluster the payment's high-water mark lives in another slot than the callback's key.
  ...CLIENT_KINDS.map((kind): [string, () => Promise<WebhookStore>] => [
    `Redis Cluster on ${kind}`,
    async () => {
      const conn = await connectTarget(kind, cluster.target);
      closers.push(conn.close);
      return new RedisWebhookStore({ client: conn.client, keyPrefix: `supc:${kind}:` });
    },
  ]),
];

let n = 0;
const deliver = async (paymentId: string, status: 'SUCCESS' | 'REFUNDED' | 'FAILED') => {
  const { rawBody, headers } = await signCallback(API_KEY, { payment_id: paymentId, reference_id: `ORDERSUP${n}`, amount: 99, status });
  return { body: rawBody, headers };
};

describe.each(stores)('%s', (_, makeStore) => {
  it('REFUNDED then SUCCESS: onEvent runs once, the late SUCCESS is acknowledged as superseded, an outcome and no error', async () => {
    const store = await makeStore();
    const seen: string[] = [];
    const errors: string[] = [];
    const handler = createWebhookHandler({
      verifier: { apiKey: API_KEY },
      store,
      onEvent: (event) => void seen.push(event.signed.status),
      onError: (error) => void errors.push(error.message),
    });
    n += 1;
    const payment = `PAY_SUP_${n}`;
    const refunded = await handler.handle(await deliver(payment, 'REFUNDED'));
    const late = await handler.handle(await deliver(payment, 'SUCCESS'));
    expect(refunded.body.outcome).toBe('processed');
    expect(late).toMatchObject({ status: 200, body: { ok: true, outcome: 'superseded' } });
    expect(seen).toEqual(['REFUNDED']);
    expect(errors).toEqual([]);
  });

  it('in order (SUCCESS then REFUNDED) both run; another payment is not affected', async () => {
    const store = await makeStore();
    const seen: string[] = [];
    const handler = createWebhookHandler({ verifier: { apiKey: API_KEY }, store, onEvent: (e) => void seen.push(`${e.signed.payment_id}:${e.signed.status}`) });
    n += 1;
    await handler.handle(await deliver(`PAY_SUP_${n}`, 'SUCCESS'));
    await handler.handle(await deliver(`PAY_SUP_${n}`, 'REFUNDED'));
    await handler.handle(await deliver(`PAY_SUP_${n}B`, 'SUCCESS'));
    expect(seen).toEqual([`PAY_SUP_${n}:SUCCESS`, `PAY_SUP_${n}:REFUNDED`, `PAY_SUP_${n}B:SUCCESS`]);
  });

  it('a reconciliation run that read SUCCESS before the refund does not fulfil it after the REFUNDED callback', async () => {
    const store = await makeStore();
    const seen: string[] = [];
    const handler = createWebhookHandler({ verifier: { apiKey: API_KEY }, store, onEvent: (e) => void seen.push(`callback ${e.signed.status}`) });
    n += 1;
    const looked = { payment_id: `PAY_SUP_${n}`, status: 'SUCCESS' }; // what payments.retrieve said a moment ago
    await handler.handle(await deliver(looked.payment_id, 'REFUNDED'));
    const run = await runOnce(store, paymentKey(looked.payment_id, looked.status), () => void seen.push('job SUCCESS'), { payment: looked });
    expect(run).toEqual({ outcome: 'superseded' });
    expect(seen).toEqual(['callback REFUNDED']);
  });

  it('a REFUNDED fulfilled by a reconciliation run keeps a late SUCCESS callback, and a SUCCESS run, from fulfilling', async () => {
    const store = await makeStore();
    const seen: string[] = [];
    const handler = createWebhookHandler({ verifier: { apiKey: API_KEY }, store, onEvent: (e) => void seen.push(`callback ${e.signed.status}`) });
    n += 1;
    const payment = `PAY_SUP_${n}`;
    const refunded = await runOnce(store, paymentKey(payment, 'REFUNDED'), () => void seen.push('job REFUNDED'), { payment: { payment_id: payment, status: 'REFUNDED' } });
    expect(refunded.outcome).toBe('processed');
    const late = await handler.handle(await deliver(payment, 'SUCCESS'));
    expect(late.body.outcome).toBe('superseded');
    const again = await runOnce(store, paymentKey(payment, 'SUCCESS'), () => void seen.push('job SUCCESS'), { payment: { payment_id: payment, status: 'SUCCESS' } });
    expect(again.outcome).toBe('superseded');
    expect(seen).toEqual(['job REFUNDED']);
  });
});
