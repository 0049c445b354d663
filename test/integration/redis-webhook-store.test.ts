/**
 * RedisWebhookStore against a real redis-server, through ioredis and node-redis: the
 * contract of the webhook handler's store, and failing closed when Redis is away.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RedisStoreError, RedisWebhookStore } from '../../src/redis/index.js';
import { MyrGatewayError } from '../../src/core/errors/base.js';
import { CLIENT_KINDS, connect, rawCommand, RedisServer, whileRedisDown } from '../helpers/redis.js';

let server: RedisServer;
beforeAll(async () => {
  server = await RedisServer.start();
});
afterAll(() => server.stop());

let n = 0;
const key = () => `payment:PAY_${++n}:SUCCESS`;

describe.each(CLIENT_KINDS)('RedisWebhookStore on %s', (kind) => {
  let client: Awaited<ReturnType<typeof connect>>;
  let store: RedisWebhookStore;
  beforeAll(async () => {
    client = await connect(kind, server.url);
    store = new RedisWebhookStore({ client: client.client, keyPrefix: `t:${kind}:` });
  });
  afterAll(() => client.close());

  it('lets exactly one of many concurrent claims take a key', async () => {
    const k = key();
    const claims = await Promise.all(Array.from({ length: 50 }, () => store.claim(k, 60_000)));
    expect(claims.filter((c) => c.acquired)).toHaveLength(1);
    expect(claims.filter((c) => !c.acquired && c.state === 'in_flight')).toHaveLength(49);
  });

  it('reports done after complete, and complete is ignored for a token that lost the key', async () => {
    const k = key();
    const first = await store.claim(k, 60_000);
    if (!first.acquired) throw new Error('not acquired');
    await store.complete(k, 'someone-else', 60_000);
    expect(await store.claim(k, 60_000)).toEqual({ acquired: false, state: 'in_flight' });
    await store.complete(k, first.token, 60_000);
    expect(await store.claim(k, 60_000)).toEqual({ acquired: false, state: 'done' });
    // release of a done key by its old token does not reopen it
    await store.release(k, first.token);
    expect(await store.claim(k, 60_000)).toEqual({ acquired: false, state: 'done' });
  });

  it('release frees the key for the next delivery, only for the holder', async () => {
    const k = key();
    const first = await store.claim(k, 60_000);
    if (!first.acquired) throw new Error('not acquired');
    await store.release(k, 'not-the-holder');
    expect((await store.claim(k, 60_000)).acquired).toBe(false);
    await store.release(k, first.token);
    const second = await store.claim(k, 60_000);
    expect(second.acquired).toBe(true);
  });

  it('a claim expires after its TTL (a crashed handler), and the old holder can then neither complete nor release', async () => {
    const k = key();
    const first = await store.claim(k, 1);
    if (!first.acquired) throw new Error('not acquired');
    // PX 1 has passed by the time the next round trip arrives; poll instead of sleeping a fixed time.
    let second = await store.claim(k, 60_000);
    while (!second.acquired) second = await store.claim(k, 60_000);
    await store.release(k, first.token);
    await store.complete(k, first.token, 60_000);
    expect(await store.claim(k, 60_000)).toEqual({ acquired: false, state: 'in_flight' });
  });

  it('renew extends only the holder’s claim', async () => {
    const k = key();
    const first = await store.claim(k, 60_000);
    if (!first.acquired) throw new Error('not acquired');
    expect(await store.renew(k, first.token, 120_000)).toBe(true);
    expect(await store.renew(k, 'other', 120_000)).toBe(false);
    await store.complete(k, first.token, 60_000);
    expect(await store.renew(k, first.token, 120_000)).toBe(false);
  });

  it('uses at most two round trips per callback on the happy path (EVALSHA claim + EVALSHA complete)', async () => {
    const sent: string[] = [];
    const counting = { sendCommand: (args: string[]) => (sent.push(args[0] ?? ''), rawCommand(client.client, args)) };
    const counted = new RedisWebhookStore({ client: counting, keyPrefix: `t:${kind}:count:` });
    await counted.claim(key(), 1000); // loads the scripts (EVAL) once
    const first = await counted.claim(key(), 1000);
    if (first.acquired) await counted.complete(key(), first.token, 1000);
    sent.length = 0;
    const k = key();
    const claim = await counted.claim(k, 60_000);
    if (!claim.acquired) throw new Error('not acquired');
    await counted.complete(k, claim.token, 60_000);
    expect(sent).toEqual(['EVALSHA', 'EVALSHA']);
  });

  it('reloads its scripts after SCRIPT FLUSH (a restarted Redis)', async () => {
    await store.claim(key(), 60_000);
    await rawCommand(client.client, ['SCRIPT', 'FLUSH']);
    expect((await store.claim(key(), 60_000)).acquired).toBe(true);
  });
});

describe('RedisWebhookStore when Redis does not answer', () => {
  it.each(CLIENT_KINDS)('%s: rejects within timeoutMs with a RedisStoreError, not hanging on the offline queue', (kind) =>
    whileRedisDown(kind, async (client) => {
      const error = await new RedisWebhookStore({ client, timeoutMs: 200 }).claim(key(), 60_000).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(RedisStoreError);
      expect(error).toBeInstanceOf(MyrGatewayError);
      expect(error).toMatchObject({ code: 'STORE_UNAVAILABLE', retryable: true });
    }));

  it.each(CLIENT_KINDS)('%s: a claim that timed out while Redis was away does not hold the key once Redis is back', async (kind) => {
    // The timed-out command stays in the client's offline queue (both clients keep one by
    // default) and runs on reconnect, where it would hold the key for a handler that never
    // runs: every retry of the callback would get 409 until the claim's TTL ends.
    const outage = await RedisServer.start();
    const a = await connect(kind, outage.url);
    const storeA = new RedisWebhookStore({ client: a.client, timeoutMs: 200 });
    await outage.stop();
    const k = key();
    await expect(storeA.claim(k, 60_000)).rejects.toBeInstanceOf(RedisStoreError);
    await outage.start();
    const b = await connect(kind, outage.url);
    const storeB = new RedisWebhookStore({ client: b.client });
    try {
      // Wait until A has reconnected and flushed its queue (bounded).
      for (let i = 0; i < 100 && !(await storeA.claim(key(), 60_000).then(() => true, () => false)); i++) {
        await new Promise((r) => setTimeout(r, 20));
      }
      expect((await storeB.claim(k, 60_000)).acquired).toBe(true);
    } finally {
      await a.close();
      await b.close();
      await outage.stop();
    }
  });

  it('refuses a client it cannot drive, before any command', () => {
    expect(() => new RedisWebhookStore({ client: {} as never })).toThrow(/ioredis client or a node-redis/);
  });
});
