/**
 * Out-of-order callbacks: a SUCCESS delivered after the same payment's REFUNDED must not reach
 * fulfilment. It is acknowledged (200, so the gateway stops) with outcome `superseded`: an
 * outcome like a duplicate, not an error for `onError`. A reconciliation job's `runOnce` given the payment keeps the same order, with the
 * handler and on its own. In memory and on a real Redis through both clients.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RedisWebhookStore } from '../../src/redis/index.js';
import { signCallback } from '../../src/testing/index.js';
import {
  createWebhookHandler,
  MemoryWebhookStore,
  paymentKey,
  runOnce,
  type WebhookStore,
} from '../../src/webhooks/index.js';
import type { RedisClientLike } from '../../src/redis/index.js';
import { CLIENT_KINDS, connect, rawCommand, RedisServer } from '../helpers/redis.js';
import { connectTarget, RedisClusterServers } from '../helpers/redis-topologies.js';
import { lifecycleOrder, storeOrder } from '../helpers/store-ranks.js';

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

/** A Redis row: the store, and its client and key prefix to set up and inspect shared state. */
interface RedisRow {
  store: RedisWebhookStore;
  client: RedisClientLike;
  prefix: string;
}

const redisRows: [string, () => Promise<RedisRow>][] = [
  ...CLIENT_KINDS.map((kind): [string, () => Promise<RedisRow>] => [
    `Redis on ${kind}`,
    async () => {
      const conn = await connect(kind, server.url);
      closers.push(conn.close);
      const prefix = `sup:${kind}:`;
      return { store: new RedisWebhookStore({ client: conn.client, keyPrefix: prefix }), client: conn.client, prefix };
    },
  ]),
  // On a Cluster the payment's high-water mark and its lock live in other slots than the callback's key.
  ...CLIENT_KINDS.map((kind): [string, () => Promise<RedisRow>] => [
    `Redis Cluster on ${kind}`,
    async () => {
      const conn = await connectTarget(kind, cluster.target);
      closers.push(conn.close);
      const prefix = `supc:${kind}:`;
      return { store: new RedisWebhookStore({ client: conn.client, keyPrefix: prefix }), client: conn.client, prefix };
    },
  ]),
];

const stores: [string, () => Promise<WebhookStore>][] = [
  ['memory', () => Promise.resolve(new MemoryWebhookStore())],
  ...redisRows.map(([name, make]): [string, () => Promise<WebhookStore>] => [name, async () => (await make()).store]),
];

let n = 0;
const deliver = async (paymentId: string, status: 'SUCCESS' | 'REFUNDED' | 'FAILED') => {
  const { rawBody, headers } = await signCallback(API_KEY, {
    payment_id: paymentId,
    reference_id: `ORDERSUP${n}`,
    amount: 99,
    status,
  });
  return { body: rawBody, headers };
};

describe.each(stores)('%s', (_, makeStore) => {
  it('orders every pair of statuses as lifecycle.ts does (the Cluster path reads and raises the mark on its own)', async () => {
    expect(await storeOrder(await makeStore(), `PAY_SUP_RANK_${++n}`)).toEqual(lifecycleOrder());
  });

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
    const handler = createWebhookHandler({
      verifier: { apiKey: API_KEY },
      store,
      onEvent: (e) => void seen.push(`${e.signed.payment_id}:${e.signed.status}`),
    });
    n += 1;
    await handler.handle(await deliver(`PAY_SUP_${n}`, 'SUCCESS'));
    await handler.handle(await deliver(`PAY_SUP_${n}`, 'REFUNDED'));
    await handler.handle(await deliver(`PAY_SUP_${n}B`, 'SUCCESS'));
    expect(seen).toEqual([`PAY_SUP_${n}:SUCCESS`, `PAY_SUP_${n}:REFUNDED`, `PAY_SUP_${n}B:SUCCESS`]);
  });

  it('a reconciliation run that read SUCCESS before the refund does not fulfil it after the REFUNDED callback', async () => {
    const store = await makeStore();
    const seen: string[] = [];
    const handler = createWebhookHandler({
      verifier: { apiKey: API_KEY },
      store,
      onEvent: (e) => void seen.push(`callback ${e.signed.status}`),
    });
    n += 1;
    const looked = { payment_id: `PAY_SUP_${n}`, status: 'SUCCESS' }; // what payments.retrieve said a moment ago
    await handler.handle(await deliver(looked.payment_id, 'REFUNDED'));
    const run = await runOnce(
      store,
      paymentKey(looked.payment_id, looked.status),
      () => void seen.push('job SUCCESS'),
      { payment: looked },
    );
    expect(run).toEqual({ outcome: 'superseded' });
    expect(seen).toEqual(['callback REFUNDED']);
  });

  it("a merchant's own key order:<payment_id> cannot reach the payment's mark: its job runs once, the SUCCESS callback is fulfilled", async () => {
    const store = await makeStore();
    const seen: string[] = [];
    const handler = createWebhookHandler({
      verifier: { apiKey: API_KEY },
      store,
      onEvent: (e) => void seen.push(`callback ${e.signed.payment_id} ${e.signed.status}`),
    });
    const payments = Array.from({ length: 4 }, () => `PAY_SUP_${++n}`);
    for (const payment of payments) {
      expect((await runOnce(store, `order:${payment}`, () => void seen.push(`job ${payment}`))).outcome).toBe(
        'processed',
      );
    }
    for (const payment of payments) {
      expect((await handler.handle(await deliver(payment, 'SUCCESS'))).body.outcome).toBe('processed');
    }
    // A REFUNDED of the same payment must not overwrite the job's record either.
    expect((await handler.handle(await deliver(payments[0] as string, 'REFUNDED'))).body.outcome).toBe('processed');
    expect((await runOnce(store, `order:${payments[0]}`, () => void seen.push('job again'))).outcome).toBe('duplicate');
    expect(seen).toEqual([
      ...payments.map((p) => `job ${p}`),
      ...payments.map((p) => `callback ${p} SUCCESS`),
      `callback ${payments[0]} REFUNDED`,
    ]);
  });

  it("a merchant's job on order:<payment_id> after a REFUNDED does not erase the mark: a late SUCCESS stays superseded", async () => {
    const store = await makeStore();
    const seen: string[] = [];
    const handler = createWebhookHandler({
      verifier: { apiKey: API_KEY },
      store,
      onEvent: (e) => void seen.push(`callback ${e.signed.status}`),
    });
    const payment = `PAY_SUP_${++n}`;
    expect((await handler.handle(await deliver(payment, 'REFUNDED'))).body.outcome).toBe('processed');
    expect((await runOnce(store, `order:${payment}`, () => void seen.push('job'))).outcome).toBe('processed');
    expect((await handler.handle(await deliver(payment, 'SUCCESS'))).body.outcome).toBe('superseded');
    expect(seen).toEqual(['callback REFUNDED', 'job']);
  });

  it('a REFUNDED fulfilled by a reconciliation run keeps a late SUCCESS callback, and a SUCCESS run, from fulfilling', async () => {
    const store = await makeStore();
    const seen: string[] = [];
    const handler = createWebhookHandler({
      verifier: { apiKey: API_KEY },
      store,
      onEvent: (e) => void seen.push(`callback ${e.signed.status}`),
    });
    n += 1;
    const payment = `PAY_SUP_${n}`;
    const refunded = await runOnce(store, paymentKey(payment, 'REFUNDED'), () => void seen.push('job REFUNDED'), {
      payment: { payment_id: payment, status: 'REFUNDED' },
    });
    expect(refunded.outcome).toBe('processed');
    const late = await handler.handle(await deliver(payment, 'SUCCESS'));
    expect(late.body.outcome).toBe('superseded');
    const again = await runOnce(store, paymentKey(payment, 'SUCCESS'), () => void seen.push('job SUCCESS'), {
      payment: { payment_id: payment, status: 'SUCCESS' },
    });
    expect(again.outcome).toBe('superseded');
    expect(seen).toEqual(['job REFUNDED']);
  });
});

/** Waits until `condition` holds (the work under test has started). */
async function until(condition: () => boolean): Promise<void> {
  while (!condition()) await new Promise((resolve) => setTimeout(resolve, 5));
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * A reconciliation job's `runOnce` of `status` for `payment`, started and running: it recorded
 * `job <status>` in `seen`, and runs until the test lets it finish or fail.
 */
async function runningJob(store: WebhookStore, payment: string, status: 'SUCCESS' | 'REFUNDED', seen: string[]) {
  let finish!: () => void;
  let fail!: (error: Error) => void;
  const gate = new Promise<void>((resolve, reject) => {
    finish = resolve;
    fail = reject;
  });
  const run = runOnce(
    store,
    paymentKey(payment, status),
    () => {
      seen.push(`job ${status}`);
      return gate;
    },
    { payment: { payment_id: payment, status } },
  );
  await until(() => seen.length > 0);
  return { run, finish, fail };
}

const handlerOf = (store: WebhookStore, seen: string[]) =>
  createWebhookHandler({
    verifier: { apiKey: API_KEY },
    store,
    onEvent: (e) => void seen.push(`callback ${e.signed.status}`),
  });

// One payment's ordered callbacks are handled one at a time: a later status still running keeps
// an earlier one from running beside it (and finishing after it).
describe.each(stores)('one payment at a time — %s', (_, makeStore) => {
  it('a SUCCESS delivered while its REFUNDED still runs answers 409, then superseded once the refund is done: fulfilment never runs', async () => {
    const store = await makeStore();
    const seen: string[] = [];
    const handler = handlerOf(store, seen);
    const payment = `PAY_LOCK_${++n}`;
    const refund = await runningJob(store, payment, 'REFUNDED', seen);
    const early = await handler.handle(await deliver(payment, 'SUCCESS'));
    expect(early).toMatchObject({
      status: 409,
      body: { ok: false, outcome: 'in_flight' },
      headers: { 'retry-after': '1' },
    });
    refund.finish();
    expect(await refund.run).toEqual({ outcome: 'processed', value: undefined });
    expect(await handler.handle(await deliver(payment, 'SUCCESS'))).toMatchObject({
      status: 200,
      body: { ok: true, outcome: 'superseded' },
    });
    expect(seen).toEqual(['job REFUNDED']);
  });

  it('a REFUNDED delivered while its SUCCESS still runs answers 409, and runs once the fulfilment finished: fulfilment, then refund', async () => {
    const store = await makeStore();
    const seen: string[] = [];
    const handler = handlerOf(store, seen);
    const payment = `PAY_LOCK_${++n}`;
    const fulfil = await runningJob(store, payment, 'SUCCESS', seen);
    expect(await handler.handle(await deliver(payment, 'REFUNDED'))).toMatchObject({
      status: 409,
      body: { outcome: 'in_flight' },
    });
    expect(seen).toEqual(['job SUCCESS']);
    fulfil.finish();
    expect(await fulfil.run).toEqual({ outcome: 'processed', value: undefined });
    expect(await handler.handle(await deliver(payment, 'REFUNDED'))).toMatchObject({
      status: 200,
      body: { outcome: 'processed' },
    });
    expect(seen).toEqual(['job SUCCESS', 'callback REFUNDED']);
  });

  it('a run that fails gives its payment back at once: the status it held off runs on the next delivery', async () => {
    const store = await makeStore();
    const seen: string[] = [];
    const handler = handlerOf(store, seen);
    const payment = `PAY_LOCK_${++n}`;
    const refund = await runningJob(store, payment, 'REFUNDED', seen);
    expect(await handler.handle(await deliver(payment, 'SUCCESS'))).toMatchObject({ status: 409 });
    refund.fail(new Error('the refund handler failed'));
    await expect(refund.run).rejects.toMatchObject({ stage: 'handler' });
    expect(await handler.handle(await deliver(payment, 'SUCCESS'))).toMatchObject({
      status: 200,
      body: { outcome: 'processed' },
    });
    expect(seen).toEqual(['job REFUNDED', 'callback SUCCESS']);
  });

  it('a claim lost with its process holds its payment for its own TTL only', async () => {
    const store = await makeStore();
    const seen: string[] = [];
    const handler = handlerOf(store, seen);
    const payment = `PAY_LOCK_${++n}`;
    const success = await deliver(payment, 'SUCCESS');
    // Claimed for 1 s and never completed nor released: the process holding it died.
    expect(await store.claim(paymentKey(payment, 'REFUNDED'), 1000, { paymentId: payment, rank: 2 })).toMatchObject({
      acquired: true,
    });
    expect(await handler.handle(success)).toMatchObject({ status: 409 });
    await sleep(1500); // past the lost claim's TTL
    expect(await handler.handle(success)).toMatchObject({ status: 200, body: { outcome: 'processed' } });
    expect(seen).toEqual(['callback SUCCESS']);
  });

  it('a claim without a payment takes no payment lock', async () => {
    const store = await makeStore();
    const payment = `PAY_LOCK_${++n}`;
    expect(await store.claim(paymentKey(payment, 'REFUNDED'), 60_000, { paymentId: payment, rank: 2 })).toMatchObject({
      acquired: true,
    });
    expect(await store.claim(paymentKey(payment, 'SUCCESS'), 60_000)).toMatchObject({ acquired: true });
  });
});

// The payment's lock and mark on Redis are shared state: input, never trusted to stop the fleet.
describe.each(redisRows)("one payment's shared state — %s", (_, makeRow) => {
  it.each([
    ['another shape, with a day-long TTL', ['SET', 'anything', 'PX', '86400000']],
    ['an in-flight value without TTL', ['SET', 'inflight:forged']],
    ['one of its own shape without TTL', ['SET', 'inflight:60000:forged']],
    ['a value of another type', ['HSET', 'f', 'v']],
  ])('a foreign value under the payment lock — %s — is replaced by the next claim and reported', async (_, command) => {
    const { store, client, prefix } = await makeRow();
    const payment = `PAY_LOCK_${++n}`;
    const [verb, ...rest] = command as [string, ...string[]];
    await rawCommand(client, [verb, `${prefix}webhook-lock:${payment}`, ...rest]);
    const claim = await store.claim(paymentKey(payment, 'SUCCESS'), 60_000, { paymentId: payment, rank: 1 });
    expect(claim).toMatchObject({ acquired: true, warning: 'foreign_value' });
    // The lock is now this claim's: another status of the payment waits for it.
    expect(await store.claim(paymentKey(payment, 'REFUNDED'), 60_000, { paymentId: payment, rank: 2 })).toEqual({
      acquired: false,
      state: 'in_flight',
    });
  });

  it("a mark of another type under the payment's mark key neither supersedes nor blocks its callbacks", async () => {
    const { store, client, prefix } = await makeRow();
    const seen: string[] = [];
    const handler = handlerOf(store, seen);
    const payment = `PAY_LOCK_${++n}`;
    await rawCommand(client, ['HSET', `${prefix}webhook-order:${payment}`, 'rank', '2']);
    expect(await handler.handle(await deliver(payment, 'SUCCESS'))).toMatchObject({
      status: 200,
      body: { outcome: 'processed' },
    });
    expect(seen).toEqual(['callback SUCCESS']);
  });

  it.each([
    ['another shape, with a day-long TTL', ['SET', 'anything', 'PX', '86400000']],
    ['a value of another type', ['HSET', 'f', 'v']],
  ])('a foreign value under a callback key — %s — does not let a superseded callback run', async (_, command) => {
    const { store, client, prefix } = await makeRow();
    const seen: string[] = [];
    const handler = handlerOf(store, seen);
    const payment = `PAY_LOCK_${++n}`;
    expect(await handler.handle(await deliver(payment, 'REFUNDED'))).toMatchObject({
      status: 200,
      body: { outcome: 'processed' },
    });
    const [verb, ...rest] = command as [string, ...string[]];
    await rawCommand(client, [verb, `${prefix}webhook:${paymentKey(payment, 'SUCCESS')}`, ...rest]);
    expect(await handler.handle(await deliver(payment, 'SUCCESS'))).toMatchObject({
      status: 200,
      body: { outcome: 'superseded' },
    });
    expect(seen).toEqual(['callback REFUNDED']);
  });

  it.each([
    ['an in-flight value of another shape', 'inflight:forged'],
    ['one of its own shape that states a day-long TTL', 'inflight:86400000:forged'],
  ])(
    'a forged payment lock — %s, held for a day — holds the payment no longer than one claim TTL',
    async (_, forged) => {
      const { store, client, prefix } = await makeRow();
      const payment = `PAY_LOCK_${++n}`;
      const lock = `${prefix}webhook-lock:${payment}`;
      await rawCommand(client, ['SET', lock, forged, 'PX', '86400000']);
      const claim = () => store.claim(paymentKey(payment, 'SUCCESS'), 500, { paymentId: payment, rank: 1 });
      expect(await claim()).toEqual({ acquired: false, state: 'in_flight' });
      expect(Number(await rawCommand(client, ['PTTL', lock]))).toBeLessThanOrEqual(500);
      await sleep(1000); // past one claim TTL
      expect(await claim()).toMatchObject({ acquired: true });
    },
  );
});
