/**
 * RedisWebhookStore against a real redis-server, through ioredis and node-redis: the
 * contract of the webhook handler's store, and failing closed when Redis is away.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RedisStoreError, RedisWebhookStore } from '../../src/redis/index.js';
import { runOnce } from '../../src/webhooks/index.js';
import { MyrGatewayError } from '../../src/core/errors/base.js';
import { spawn } from 'node:child_process';
import { tmpdir } from 'node:os';
import { CLIENT_KINDS, connect, freePort, rawCommand, RedisServer, whileRedisDown } from '../helpers/redis.js';
import { lifecycleOrder, storeOrder } from '../helpers/store-ranks.js';

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

  it('answers superseded for exactly the pairs of statuses lifecycle.ts orders (its scripts get their ranks from there)', async () => {
    expect(await storeOrder(store, `PAY_RANK_${kind}`)).toEqual(lifecycleOrder());
    const authenticated = new RedisWebhookStore({
      client: client.client,
      keyPrefix: `t:${kind}:mac:`,
      authenticateWith: 'sk_test_ranks',
    });
    expect(await storeOrder(authenticated, `PAY_RANK_${kind}`)).toEqual(lifecycleOrder());
  });

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

  it('complete, release and renew say whether the claim was still the caller’s', async () => {
    const k = key();
    const first = await store.claim(k, 60_000);
    if (!first.acquired) throw new Error('not acquired');
    expect(await store.complete(k, 'someone-else', 60_000)).toBe(false);
    expect(await store.release(k, 'someone-else')).toBe(false);
    expect(await store.complete(k, first.token, 60_000)).toBe(true);
    expect(await store.complete(k, first.token, 60_000)).toBe(false); // done: no longer a claim
    expect(await store.release(k, first.token)).toBe(false);

    const lost = key();
    const held = await store.claim(lost, 60_000);
    if (!held.acquired) throw new Error('not acquired');
    await rawCommand(client.client, ['DEL', `t:${kind}:webhook:${lost}`]); // the store lost it
    expect(await store.renew(lost, held.token, 60_000)).toBe(false);
    expect(await store.release(lost, held.token)).toBe(false);
    expect(await store.complete(lost, held.token, 60_000)).toBe(false);
    expect(await store.claim(lost, 60_000)).toEqual({ acquired: false, state: 'done' }); // recorded all the same
  });

  it.each([
    ['a bare "done" without TTL (suppression)', ['SET', 'done']],
    ['another value without TTL (blocking)', ['SET', 'anything']],
    ['another value with a long TTL', ['SET', 'x', 'PX', '86400000']],
    ['an in-flight value without TTL', ['SET', 'inflight:forged']],
    ['a value of another type', ['HSET', 'f', 'v']],
  ])('a foreign value — %s — is replaced by the next claim and reported', async (_, command) => {
    const k = key();
    const [verb, ...rest] = command as [string, ...string[]];
    await rawCommand(client.client, [verb, `t:${kind}:webhook:${k}`, ...rest]);
    const claim = await store.claim(k, 60_000);
    expect(claim).toMatchObject({ acquired: true, warning: 'foreign_value' });
  });

  it('a shorter claim never shortens a live claim of this store (a runOnce job on shorter times, a rolling upgrade)', async () => {
    const k = key();
    const holder = await store.claim(k, 60_000);
    if (!holder.acquired) throw new Error('not acquired');
    expect(await store.claim(k, 200)).toEqual({ acquired: false, state: 'in_flight' });
    expect(Number(await rawCommand(client.client, ['PTTL', `t:${kind}:webhook:${k}`]))).toBeGreaterThan(50_000);
    expect(await store.renew(k, holder.token, 60_000)).toBe(true);
  });

  it('a job with a short claim neither cuts nor takes over a running one: the work runs once', async () => {
    const k = key();
    const runs: string[] = [];
    let finish!: () => void;
    const running = runOnce(store, k, () => new Promise<void>((resolve) => ((finish = resolve), runs.push('long'))), {
      inFlightTtlMs: 60_000,
    });
    while (runs.length === 0) await new Promise((resolve) => setTimeout(resolve, 5));
    const short = () => runOnce(store, k, () => void runs.push('short'), { inFlightTtlMs: 300 });
    expect(await short()).toEqual({ outcome: 'in_flight' });
    await new Promise((resolve) => setTimeout(resolve, 700)); // past the short claim's TTL
    expect(await short()).toEqual({ outcome: 'in_flight' });
    finish();
    expect(await running).toEqual({ outcome: 'processed', value: undefined });
    expect(await short()).toEqual({ outcome: 'duplicate' });
    expect(runs).toEqual(['long']);
  });

  it('a forged in-flight value cannot block a key longer than one claim TTL', async () => {
    const k = key();
    await rawCommand(client.client, ['SET', `t:${kind}:webhook:${k}`, 'inflight:forged', 'PX', '86400000']);
    expect(await store.claim(k, 200)).toEqual({ acquired: false, state: 'in_flight' });
    expect(Number(await rawCommand(client.client, ['PTTL', `t:${kind}:webhook:${k}`]))).toBeLessThanOrEqual(200);
  });

  it('a forged claim of this store’s shape that states a day-long TTL blocks a key no longer than one claim TTL', async () => {
    const k = key();
    await rawCommand(client.client, ['SET', `t:${kind}:webhook:${k}`, 'inflight:86400000:forged', 'PX', '86400000']);
    expect(await store.claim(k, 200)).toEqual({ acquired: false, state: 'in_flight' });
    expect(Number(await rawCommand(client.client, ['PTTL', `t:${kind}:webhook:${k}`]))).toBeLessThanOrEqual(200);
  });

  it('a claim lives at most 15 minutes between renewals, so no stated TTL in Redis is trusted beyond that', async () => {
    const k = key();
    const holder = await store.claim(k, 1_800_000);
    if (!holder.acquired) throw new Error('not acquired');
    expect(Number(await rawCommand(client.client, ['PTTL', `t:${kind}:webhook:${k}`]))).toBeLessThanOrEqual(900_000);
    expect(await store.renew(k, holder.token, 1_800_000)).toBe(true);
    expect(Number(await rawCommand(client.client, ['PTTL', `t:${kind}:webhook:${k}`]))).toBeLessThanOrEqual(900_000);
    expect(await store.claim(k, 200)).toEqual({ acquired: false, state: 'in_flight' });
    expect(Number(await rawCommand(client.client, ['PTTL', `t:${kind}:webhook:${k}`]))).toBeGreaterThan(800_000);
  });

  describe('authenticateWith: the ledger’s own values carry a MAC', () => {
    const API_KEY = 'sk_test_ledger_mac_0001';
    const authenticated = (apiKeys: string | string[], prefix = `t:${kind}:mac:`) =>
      new RedisWebhookStore({ client: client.client, keyPrefix: prefix, authenticateWith: apiKeys });

    it('a forged "done" with a TTL is detected: replaced by the next claim and reported', async () => {
      const k = key();
      await rawCommand(client.client, ['SET', `t:${kind}:mac:webhook:${k}`, 'done', 'PX', '86400000']);
      expect(await authenticated(API_KEY).claim(k, 60_000)).toMatchObject({ acquired: true, warning: 'foreign_value' });
    });

    it('a done copied from another key is detected too', async () => {
      const store = authenticated(API_KEY);
      const a = key();
      const claim = await store.claim(a, 60_000);
      if (!claim.acquired) throw new Error('not acquired');
      await store.complete(a, claim.token, 60_000);
      const genuine = String(await rawCommand(client.client, ['GET', `t:${kind}:mac:webhook:${a}`]));
      expect(genuine).toMatch(/^done:[\w-]{22}$/);
      expect(genuine).not.toContain(API_KEY);
      const b = key();
      await rawCommand(client.client, ['SET', `t:${kind}:mac:webhook:${b}`, genuine, 'PX', '86400000']);
      expect(await store.claim(b, 60_000)).toMatchObject({ acquired: true, warning: 'foreign_value' });
    });

    it('its own done is done, also for a process that rotated to a new key and keeps the old one', async () => {
      const k = key();
      const old = authenticated(API_KEY);
      const claim = await old.claim(k, 60_000);
      if (!claim.acquired) throw new Error('not acquired');
      await old.complete(k, claim.token, 60_000);
      expect(await old.claim(k, 60_000)).toEqual({ acquired: false, state: 'done' });
      expect(await authenticated(['sk_test_ledger_mac_0002', API_KEY]).claim(k, 60_000)).toEqual({
        acquired: false,
        state: 'done',
      });
      expect(await authenticated('sk_test_ledger_mac_0002').claim(k, 60_000)).toMatchObject({
        acquired: true,
        warning: 'foreign_value',
      });
    });

    it('a forged REFUNDED high-water mark does not supersede a SUCCESS; a genuine one does', async () => {
      const store = authenticated(API_KEY);
      const payment = `PAY_MARK_${++n}`;
      await rawCommand(client.client, ['SET', `t:${kind}:mac:order:${payment}`, '2', 'PX', '86400000']);
      const success = await store.claim(`payment:${payment}:SUCCESS`, 60_000, { paymentId: payment, rank: 1 });
      if (!success.acquired) throw new Error('superseded by a forged mark');
      // One payment's callbacks run one at a time: its SUCCESS is done before its REFUNDED is claimed.
      expect(await store.complete(`payment:${payment}:SUCCESS`, success.token, 60_000)).toBe(true);
      const refunded = await store.claim(`payment:${payment}:REFUNDED`, 60_000, { paymentId: payment, rank: 2 });
      if (!refunded.acquired) throw new Error('not acquired');
      await store.complete(`payment:${payment}:REFUNDED`, refunded.token, 60_000, { paymentId: payment, rank: 2 });
      expect(await store.claim(`payment:${payment}:FAILED`, 60_000, { paymentId: payment, rank: 1 })).toEqual({
        acquired: false,
        state: 'superseded',
      });
    });

    it('refuses an empty key list', () => {
      expect(() => authenticated([])).toThrow(/authenticateWith/);
    });

    describe('rotating the api key, with old and new instances live at once on one Redis', () => {
      const NEW_KEY = 'sk_test_ledger_mac_0003';
      const phaseStores = (prefix: string) => ({
        old: authenticated(API_KEY, prefix), // not yet redeployed
        phase1: authenticated([NEW_KEY, API_KEY], prefix), // redeployed with the new key first, as the docs say
        phase2: new RedisWebhookStore({
          client: client.client,
          keyPrefix: prefix,
          authenticateWith: [NEW_KEY, API_KEY],
          writeWith: NEW_KEY,
        }),
        done: authenticated(NEW_KEY, prefix), // the old key dropped
      });
      const fulfil = async (store: RedisWebhookStore, k: string, runs: string[], who: string) =>
        (await runOnce(store, k, () => void runs.push(who))).outcome;

      it('phase 1: a callback completed by a redeployed instance is a duplicate on one not yet redeployed, and the other way round', async () => {
        const { old, phase1 } = phaseStores(`t:${kind}:rot1:`);
        const runs: string[] = [];
        const a = key();
        expect(await fulfil(phase1, a, runs, 'new')).toBe('processed');
        expect(await fulfil(old, a, runs, 'old')).toBe('duplicate');
        const b = key();
        expect(await fulfil(old, b, runs, 'old')).toBe('processed');
        expect(await fulfil(phase1, b, runs, 'new')).toBe('duplicate');
        expect(runs).toEqual(['new', 'old']);
      });

      it('phase 2: once every instance accepts both keys, writeWith switches the writes; every phase-1 and phase-2 instance reads them', async () => {
        const { phase1, phase2, done } = phaseStores(`t:${kind}:rot2:`);
        const runs: string[] = [];
        const a = key();
        expect(await fulfil(phase2, a, runs, 'phase2')).toBe('processed');
        expect(await fulfil(phase1, a, runs, 'phase1')).toBe('duplicate');
        expect(await fulfil(done, a, runs, 'done')).toBe('duplicate'); // written under the new key: the last phase reads it
        expect(runs).toEqual(['phase2']);
      });

      it('refuses a writeWith that is not one of the keys it accepts, without naming the key', () => {
        const refuse = (options: { authenticateWith?: string | string[]; writeWith: string }) => () =>
          new RedisWebhookStore({ client: client.client, keyPrefix: `t:${kind}:rot3:`, ...options });
        expect(refuse({ authenticateWith: [API_KEY], writeWith: NEW_KEY })).toThrow(/writeWith/);
        expect(refuse({ writeWith: NEW_KEY })).toThrow(/writeWith/);
        let message = '';
        try {
          refuse({ authenticateWith: [API_KEY], writeWith: NEW_KEY })();
        } catch (error) {
          message = String(error);
        }
        expect(message).not.toContain(NEW_KEY);
      });
    });
  });

  it('memory: a handled callback keeps one key of about 130 bytes; a refund adds a high-water mark of about 90 (docs/benchmarks.md)', async () => {
    const payment = `PAY_${1e11 + ++n}`;
    const usage = async (k: string) => Number(await rawCommand(client.client, ['MEMORY', 'USAGE', `t:${kind}:${k}`]));
    const success = await store.claim(`payment:${payment}:SUCCESS`, 4000, { paymentId: payment, rank: 1 });
    if (!success.acquired) throw new Error('not acquired');
    await store.complete(`payment:${payment}:SUCCESS`, success.token, 86_400_000);
    expect(await usage(`webhook:payment:${payment}:SUCCESS`)).toBeGreaterThan(0);
    expect(await usage(`webhook:payment:${payment}:SUCCESS`)).toBeLessThanOrEqual(136);
    const refund = await store.claim(`payment:${payment}:REFUNDED`, 4000, { paymentId: payment, rank: 2 });
    if (!refund.acquired) throw new Error('not acquired');
    await store.complete(`payment:${payment}:REFUNDED`, refund.token, 86_400_000, { paymentId: payment, rank: 2 });
    expect(await usage(`webhook-order:${payment}`)).toBeGreaterThan(0);
    expect(await usage(`webhook-order:${payment}`)).toBeLessThanOrEqual(104);
  });

  it('reloads its scripts after SCRIPT FLUSH (a restarted Redis)', async () => {
    await store.claim(key(), 60_000);
    await rawCommand(client.client, ['SCRIPT', 'FLUSH']);
    expect((await store.claim(key(), 60_000)).acquired).toBe(true);
  });
});

describe('RedisWebhookStore when Redis does not answer', () => {
  it.each(CLIENT_KINDS)(
    '%s: rejects within timeoutMs with a RedisStoreError, not hanging on the offline queue',
    (kind) =>
      whileRedisDown(kind, async (client) => {
        const error = await new RedisWebhookStore({ client, timeoutMs: 200 })
          .claim(key(), 60_000)
          .catch((e: unknown) => e);
        expect(error).toBeInstanceOf(RedisStoreError);
        expect(error).toBeInstanceOf(MyrGatewayError);
        expect(error).toMatchObject({ code: 'STORE_UNAVAILABLE', retryable: true });
      }),
  );

  it.each(CLIENT_KINDS)(
    '%s: a claim that timed out while Redis was away does not hold the key once Redis is back',
    async (kind) => {
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
        for (
          let i = 0;
          i < 100 &&
          !(await storeA.claim(key(), 60_000).then(
            () => true,
            () => false,
          ));
          i++
        ) {
          await new Promise((r) => setTimeout(r, 20));
        }
        expect((await storeB.claim(k, 60_000)).acquired).toBe(true);
      } finally {
        await a.close();
        await b.close();
        await outage.stop();
      }
    },
  );

  it.each(CLIENT_KINDS)(
    '%s: a payment claim whose answer was lost (Redis paused past timeoutMs) leaves neither its key nor its payment held',
    async (kind) => {
      const a = await connect(kind, server.url);
      const admin = await connect(kind, server.url);
      const prefix = `lost:${kind}:`;
      const storeA = new RedisWebhookStore({ client: a.client, timeoutMs: 200, keyPrefix: prefix });
      const storeB = new RedisWebhookStore({ client: admin.client, keyPrefix: prefix });
      try {
        await storeA.claim(key(), 60_000); // the server checked and the script loaded: the claim below goes by SHA
        const payment = `PAY_LOST_${++n}`;
        await rawCommand(admin.client, ['CLIENT', 'PAUSE', '600', 'ALL']);
        // Held by the paused server past timeoutMs, the claim runs once Redis resumes: it takes the
        // key and the payment's lock, and its answer comes too late for the caller.
        await expect(
          storeA.claim(`payment:${payment}:SUCCESS`, 60_000, { paymentId: payment, rank: 1 }),
        ).rejects.toBeInstanceOf(RedisStoreError);
        const refund = () => storeB.claim(`payment:${payment}:REFUNDED`, 60_000, { paymentId: payment, rank: 2 });
        let claim = await refund();
        // The release follows the late claim within a round trip or two (bounded wait).
        for (let i = 0; i < 100 && !claim.acquired; i++) {
          await new Promise((r) => setTimeout(r, 20));
          claim = await refund();
        }
        expect(claim).toMatchObject({ acquired: true });
        expect((await storeB.claim(`payment:${payment}:SUCCESS`, 60_000)).acquired).toBe(true);
      } finally {
        await a.close();
        await admin.close();
      }
    },
  );

  it('refuses a client it cannot drive, before any command', () => {
    expect(() => new RedisWebhookStore({ client: {} as never })).toThrow(/ioredis client or a node-redis/);
  });
});

describe('RedisWebhookStore waitForReplicas', () => {
  it.each(CLIENT_KINDS)(
    '%s: waitForReplicas reports a claim and a completion fewer replicas acknowledged',
    async (kind) => {
      const conn = await connect(kind, server.url);
      try {
        const waiting = new RedisWebhookStore({
          client: conn.client,
          timeoutMs: 1000,
          waitForReplicas: { replicas: 1, timeoutMs: 50 },
        });
        const k = key();
        const claim = await waiting.claim(k, 60_000); // this server has no replica
        expect(claim).toMatchObject({ acquired: true, warning: 'under_replicated' });
        if (!claim.acquired) throw new Error('not acquired');
        expect(await waiting.complete(k, claim.token, 60_000)).toBe('under_replicated');
        expect(await waiting.claim(k, 60_000)).toEqual({ acquired: false, state: 'done' });
      } finally {
        await conn.close();
      }
    },
  );

  it.each(CLIENT_KINDS)(
    '%s: waitForReplicas with a live replica: claim and completion acknowledged, no warning',
    async (kind) => {
      const primary = await RedisServer.start();
      const port = await freePort();
      const replica = spawn(
        'redis-server',
        [
          '--port',
          String(port),
          '--bind',
          '127.0.0.1',
          '--dir',
          tmpdir(),
          '--dbfilename',
          `myr-replica-${port}.rdb`,
          '--save',
          '',
          '--appendonly',
          'no',
          '--replicaof',
          '127.0.0.1',
          String(primary.port),
        ],
        { stdio: 'ignore' },
      );
      const conn = await connect(kind, primary.url);
      try {
        // Bounded wait until the replica finished its first sync (WAIT counts only online replicas).
        for (
          let i = 0;
          i < 200 && !/slave0:.*state=online/.test(String(await rawCommand(conn.client, ['INFO', 'replication'])));
          i++
        ) {
          await new Promise((r) => setTimeout(r, 25));
        }
        const waiting = new RedisWebhookStore({
          client: conn.client,
          timeoutMs: 2000,
          waitForReplicas: { replicas: 1, timeoutMs: 1000 },
        });
        const k = key();
        const claim = await waiting.claim(k, 60_000);
        expect(claim).toEqual({ acquired: true, token: expect.any(String) });
        if (!claim.acquired) throw new Error('not acquired');
        expect(await waiting.complete(k, claim.token, 60_000)).toBe(true);
      } finally {
        await conn.close();
        replica.kill('SIGKILL');
        await primary.stop();
      }
    },
  );

  it('refuses a replica wait it cannot do within the store timeout', () => {
    const client = { call: () => Promise.resolve(null) };
    expect(
      () => new RedisWebhookStore({ client, timeoutMs: 100, waitForReplicas: { replicas: 1, timeoutMs: 100 } }),
    ).toThrow(/below the store timeoutMs/);
    expect(() => new RedisWebhookStore({ client, waitForReplicas: { replicas: 0, timeoutMs: 10 } })).toThrow(
      /at least 1/,
    );
  });
});
