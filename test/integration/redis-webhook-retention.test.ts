/**
 * How long RedisWebhookStore remembers a handled payment: a resend from the gateway's
 * dashboard is freshly signed, so only the store's record stops it. On a real redis-server
 * (and a Cluster, where the payment's mark is raised in its own step), the clock is moved by
 * ageing every key the payment left: each TTL shortened by that much, a key with less left
 * deleted, exactly as Redis would have expired it meanwhile.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RedisWebhookStore, type RedisClientLike } from '../../src/redis/index.js';
import { signCallback } from '../../src/testing/index.js';
import { createWebhookHandler, paymentKey, runOnce } from '../../src/webhooks/index.js';
import { CLIENT_KINDS, connect, rawCommand, RedisServer } from '../helpers/redis.js';
import { connectTarget, RedisClusterServers } from '../helpers/redis-topologies.js';

const API_KEY = 'sk_test_retention_0001';
const HOUR_MS = 3_600_000;
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

const targets: [string, () => Promise<RedisClientLike>][] = [
  ...CLIENT_KINDS.map((kind): [string, () => Promise<RedisClientLike>] => [
    kind,
    async () => (await track(connect(kind, server.url))).client,
  ]),
  ['a Cluster on ioredis', async () => (await track(connectTarget('ioredis', cluster.target))).client],
];

async function track<T extends { close: () => Promise<void> }>(connecting: Promise<T>): Promise<T> {
  const conn = await connecting;
  closers.push(conn.close);
  return conn;
}

/** Every key the store writes for `payment` under `prefix` aged by `ms`, as if Redis's clock had moved on. */
async function age(client: RedisClientLike, prefix: string, payment: string, ms: number): Promise<void> {
  const keys = [
    ...['SUCCESS', 'REFUNDED'].map((status) => `${prefix}webhook:payment:${payment}:${status}`),
    `${prefix}webhook-order:${payment}`,
    `${prefix}webhook-lock:${payment}`,
  ];
  for (const key of keys) {
    const left = Number(await rawCommand(client, ['PTTL', key]));
    if (left === -2) continue;
    if (left === -1) throw new Error(`${key} has no TTL`);
    await rawCommand(client, left <= ms ? ['DEL', key] : ['PEXPIRE', key, String(left - ms)]);
  }
}

let n = 0;
describe.each(targets)('RedisWebhookStore on %s', (name, makeClient) => {
  let client: RedisClientLike;
  const prefix = `ret:${name.replaceAll(' ', '-')}:`;
  beforeAll(async () => {
    client = await makeClient();
  });

  const setUp = (options: { paymentRecordTtlMs?: number } = {}) => {
    const fulfilled: string[] = [];
    const store = new RedisWebhookStore({ client, keyPrefix: prefix, ...options });
    const handler = createWebhookHandler({
      verifier: { apiKey: API_KEY },
      store,
      onEvent: (event) => void fulfilled.push(event.signed.status),
    });
    const payment = `PAY_RET_${++n}`;
    // Signed now, as the dashboard's resend is: the staleness check cannot stop it.
    const deliver = async (status: 'SUCCESS' | 'REFUNDED') => {
      const { rawBody, headers } = await signCallback(API_KEY, {
        payment_id: payment,
        reference_id: `ORDERRET${n}`,
        amount: 120,
        status,
      });
      return (await handler.handle({ body: rawBody, headers })).body;
    };
    return { fulfilled, payment, deliver, store };
  };

  it('a resend of a handled SUCCESS and of a handled REFUNDED 25 h later is a duplicate, never fulfilled again', async () => {
    const { fulfilled, payment, deliver } = setUp();
    expect(await deliver('SUCCESS')).toMatchObject({ outcome: 'processed' });
    await age(client, prefix, payment, 25 * HOUR_MS);
    expect(await deliver('SUCCESS')).toMatchObject({ outcome: 'duplicate' });
    expect(await deliver('REFUNDED')).toMatchObject({ outcome: 'processed' });
    await age(client, prefix, payment, 25 * HOUR_MS);
    expect(await deliver('REFUNDED')).toMatchObject({ outcome: 'duplicate' });
    expect(fulfilled).toEqual(['SUCCESS', 'REFUNDED']);
  });

  it('runOnce given a paymentKey alone keeps the payment as its callback does: the callback resent 25 h later is a duplicate', async () => {
    const { fulfilled, payment, deliver, store } = setUp();
    const reconciled = await runOnce(store, paymentKey(payment, 'SUCCESS'), () => void fulfilled.push('SUCCESS'));
    expect(reconciled.outcome).toBe('processed');
    await age(client, prefix, payment, 25 * HOUR_MS);
    expect(await deliver('SUCCESS')).toMatchObject({ outcome: 'duplicate' });
    expect(fulfilled).toEqual(['SUCCESS']);
  });

  it('a stale SUCCESS 25 h after its payment was refunded is superseded, never fulfilled', async () => {
    const { fulfilled, deliver, payment } = setUp();
    expect(await deliver('REFUNDED')).toMatchObject({ outcome: 'processed' });
    await age(client, prefix, payment, 25 * HOUR_MS);
    expect(await deliver('SUCCESS')).toMatchObject({ outcome: 'superseded' });
    expect(fulfilled).toEqual(['REFUNDED']);
  });

  it('keeps a payment 30 days by default: just before, still a duplicate; just after, its records are gone', async () => {
    const { deliver, payment } = setUp();
    expect(await deliver('SUCCESS')).toMatchObject({ outcome: 'processed' });
    expect(await deliver('REFUNDED')).toMatchObject({ outcome: 'processed' });
    await age(client, prefix, payment, 30 * 24 * HOUR_MS - 60_000);
    expect(await deliver('SUCCESS')).toMatchObject({ outcome: 'duplicate' });
    expect(await deliver('REFUNDED')).toMatchObject({ outcome: 'duplicate' });
    await age(client, prefix, payment, 120_000);
    for (const key of [
      `webhook:payment:${payment}:SUCCESS`,
      `webhook:payment:${payment}:REFUNDED`,
      `webhook-order:${payment}`,
    ]) {
      expect(Number(await rawCommand(client, ['EXISTS', prefix + key]))).toBe(0);
    }
  });

  it('paymentRecordTtlMs sets the window (here 90 days)', async () => {
    const { deliver, payment } = setUp({ paymentRecordTtlMs: 90 * 24 * HOUR_MS });
    expect(await deliver('REFUNDED')).toMatchObject({ outcome: 'processed' });
    await age(client, prefix, payment, 89 * 24 * HOUR_MS);
    expect(await deliver('REFUNDED')).toMatchObject({ outcome: 'duplicate' });
    expect(await deliver('SUCCESS')).toMatchObject({ outcome: 'superseded' });
  });
});
