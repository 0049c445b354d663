/**
 * RedisTokenStore against a real redis-server, through ioredis and node-redis: one
 * refresh for many store instances (stand-ins for processes), one replacement of a
 * rejected token, a dead lock holder, bounded waits, and no secret in key names.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { StoredToken } from '../../../src/core/tokens/store.js';
import { MyrGatewayError } from '../../../src/core/errors/base.js';
import { RedisStoreError, RedisTokenStore } from '../../../src/redis/index.js';
import { CLIENT_KINDS, connect, rawCommand, RedisServer, whileRedisDown } from '../../helpers/redis.js';

let server: RedisServer;
beforeAll(async () => {
  server = await RedisServer.start();
});
afterAll(() => server.stop());

let n = 0;
const HOUR = 3_600_000;
/** The same token, its expiry as read back from Redis's PTTL (within a second of the written one). */
const near = (token: StoredToken) => ({
  accessToken: token.accessToken,
  expiresAt: expect.closeTo(token.expiresAt, -3) as number,
});

describe.each(CLIENT_KINDS)('RedisTokenStore on %s', (kind) => {
  let conn: Awaited<ReturnType<typeof connect>>;
  const send = (args: string[]) => rawCommand(conn.client, args);
  const stores = (count: number, options: { lockTtlMs?: number } = {}) =>
    Array.from(
      { length: count },
      () => new RedisTokenStore({ client: conn.client, keyPrefix: `t:${kind}:`, pollIntervalMs: 5, ...options }),
    );
  const fetcher = () => {
    let calls = 0;
    const fetchToken = async (): Promise<StoredToken> => {
      calls += 1;
      await new Promise((r) => setTimeout(r, 20)); // the request takes a while: others must wait, not fetch
      return { accessToken: `tok_${kind}_${++n}`, expiresAt: Date.now() + HOUR };
    };
    return { fetchToken, calls: () => calls };
  };
  beforeAll(async () => {
    conn = await connect(kind, server.url);
  });
  afterAll(() => conn.close());

  it('keeps get/set/delete semantics of a TokenStore', async () => {
    const [store] = stores(1);
    const key = `merchant-${++n}`;
    expect(await store!.get(key)).toBeUndefined();
    const token = { accessToken: 'tok_a', expiresAt: Date.now() + HOUR };
    await store!.set(key, token);
    expect(await store!.get(key)).toMatchObject(near(token));
    await store!.delete(key);
    expect(await store!.get(key)).toBeUndefined();
  });

  it('cold cache: 16 stores refreshing at once call fetchToken once and all get its token', async () => {
    const key = `merchant-${++n}`;
    const { fetchToken, calls } = fetcher();
    const results = await Promise.all(stores(16).map((s) => s.refresh(key, fetchToken, {})));
    expect(calls()).toBe(1);
    expect(new Set(results.map((t) => t.accessToken)).size).toBe(1);
    expect(await stores(1)[0]!.get(key)).toMatchObject(near(results[0]!));
  });

  it('a rejected token is replaced once for all, and a caller late with the same stale token gets the replacement', async () => {
    const key = `merchant-${++n}`;
    const all = stores(8);
    const stale = { accessToken: `stale_${n}`, expiresAt: Date.now() + HOUR };
    await all[0]!.set(key, stale);
    const { fetchToken, calls } = fetcher();
    const results = await Promise.all(all.map((s) => s.refresh(key, fetchToken, { staleToken: stale.accessToken })));
    expect(calls()).toBe(1);
    expect(new Set(results.map((t) => t.accessToken))).toEqual(new Set([results[0]!.accessToken]));
    expect(results[0]!.accessToken).not.toBe(stale.accessToken);
    const late = await all[3]!.refresh(key, fetchToken, { staleToken: stale.accessToken });
    expect(late).toMatchObject(near(results[0]!));
    expect(calls()).toBe(1);
  });

  it('a lock left by a dead holder is freed by its TTL', async () => {
    const key = `merchant-${++n}`;
    const prefix = `t:${kind}:dead${n}:`;
    const store = new RedisTokenStore({ client: conn.client, keyPrefix: prefix, pollIntervalMs: 5, lockTtlMs: 150 });
    // The first holder's lock is overwritten by a process that then dies holding it (no release).
    const first = store.refresh(
      key,
      async () => {
        const [lock] = (await send(['KEYS', `${prefix}token-lock:*`])) as string[];
        await send(['SET', lock!, 'dead-holder', 'PX', '150']);
        throw new Error('holder died');
      },
      {},
    );
    await expect(first).rejects.toThrow('holder died');
    expect(await send(['KEYS', `${prefix}token-lock:*`])).toHaveLength(1);
    const { fetchToken, calls } = fetcher();
    const token = await store.refresh(key, fetchToken, { signal: AbortSignal.timeout(5_000) });
    expect(calls()).toBe(1);
    expect(await store.get(key)).toMatchObject(near(token));
  });

  it('releases the lock when fetchToken fails, so the next caller fetches', async () => {
    const key = `merchant-${++n}`;
    const [a, b] = stores(2);
    await expect(a!.refresh(key, () => Promise.reject(new Error('INVALID_CREDENTIALS')), {})).rejects.toThrow(
      'INVALID_CREDENTIALS',
    );
    const { fetchToken, calls } = fetcher();
    await b!.refresh(key, fetchToken, { signal: AbortSignal.timeout(5_000) });
    expect(calls()).toBe(1);
  });

  it('a waiter gives up when its signal aborts, with a typed error', async () => {
    const key = `merchant-${++n}`;
    const [holder, waiter] = stores(2);
    let finish!: (t: StoredToken) => void;
    const held = holder!.refresh(key, () => new Promise<StoredToken>((r) => (finish = r)), {});
    while (!finish) await new Promise((r) => setTimeout(r, 1));
    const controller = new AbortController();
    const waiting = waiter!.refresh(key, fetcher().fetchToken, { signal: controller.signal });
    controller.abort();
    await expect(waiting).rejects.toMatchObject({ name: 'TimeoutError', code: 'TIMEOUT' });
    finish({ accessToken: 'tok_late', expiresAt: Date.now() + HOUR });
    expect((await held).accessToken).toBe('tok_late');
  });

  it('writes no api key or token into key names', async () => {
    const [store] = stores(1);
    const key = 'myr-gateway:token:https://api.example/api/v1/:MERCHANT_SECRETIVE';
    await store!.refresh(key, async () => ({ accessToken: 'tok_visible_secret', expiresAt: Date.now() + HOUR }), {});
    const names = (await send(['KEYS', '*'])) as string[];
    expect(names.join('\n')).not.toMatch(/tok_visible_secret|MERCHANT_SECRETIVE|api\.example/);
    expect(JSON.stringify(store)).not.toMatch(/tok_/);
  });
});

describe('RedisTokenStore when Redis does not answer', () => {
  it.each(CLIENT_KINDS)('%s: get and refresh reject promptly with a RedisStoreError', (kind) =>
    whileRedisDown(kind, async (client) => {
      const store = new RedisTokenStore({ client, timeoutMs: 200 });
      await expect(store.get('k')).rejects.toBeInstanceOf(RedisStoreError);
      const error = await store
        .refresh('k', () => Promise.reject(new Error('must not fetch')), {})
        .catch((e: unknown) => e);
      expect(error).toBeInstanceOf(MyrGatewayError);
      expect(error).toMatchObject({ code: 'STORE_UNAVAILABLE' });
    }),
  );
});
