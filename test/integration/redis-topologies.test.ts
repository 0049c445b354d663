/**
 * Issue 14: the three Redis stores on every topology a merchant runs, with both clients: a real
 * 3-master Redis Cluster (ioredis `Cluster`, node-redis `createCluster`) and a real Sentinel set
 * (ioredis `{ sentinels, name }`, node-redis `createSentinel`). A client the stores cannot drive
 * is refused when the store is built; a server older than Redis 5 fails every operation with
 * REDIS_VERSION_UNSUPPORTED; a server that may lose keys is warned about once, through `logger`.
 */
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { StoredToken } from '../../src/core/tokens/store.js';
import { type ClientErrorCode, ConfigurationError, RateLimitError } from '../../src/index.js';
import {
  RedisRateLimiter,
  RedisStoreError,
  RedisTokenStore,
  RedisVersionError,
  RedisWebhookStore,
  type RedisClientLike,
} from '../../src/redis/index.js';
import { CLIENT_KINDS, connect, RedisServer } from '../helpers/redis.js';
import {
  connectTarget,
  RedisClusterServers,
  RedisSentinelServers,
  type RedisTarget,
} from '../helpers/redis-topologies.js';

let cluster: RedisClusterServers;
let sentinel: RedisSentinelServers;
beforeAll(async () => {
  [cluster, sentinel] = await Promise.all([RedisClusterServers.start(), RedisSentinelServers.start()]);
}, 60_000);
afterAll(async () => {
  await Promise.all([cluster?.stop(), sentinel?.stop()]);
});

const HOUR = 3_600_000;
let n = 0;
const topologies = (): Record<'cluster' | 'sentinel', RedisTarget> => ({
  cluster: cluster.target,
  sentinel: sentinel.target,
});

describe.each(
  (['cluster', 'sentinel'] as const).flatMap((topology) => CLIENT_KINDS.map((kind) => ({ topology, kind }))),
)('$topology on $kind', ({ topology, kind }) => {
  let a: Awaited<ReturnType<typeof connectTarget>>;
  let b: Awaited<ReturnType<typeof connectTarget>>;
  beforeAll(async () => {
    a = await connectTarget(kind, topologies()[topology]);
    b = await connectTarget(kind, topologies()[topology]);
  });
  afterAll(async () => {
    await a?.close();
    await b?.close();
  });
  const prefix = () => `topo:${topology}:${kind}:${++n}:`;

  it('RedisTokenStore: 8 stores on two connections refreshing a cold cache call fetchToken once', async () => {
    const keyPrefix = prefix();
    let calls = 0;
    const fetchToken = async (): Promise<StoredToken> => {
      calls += 1;
      await new Promise((r) => setTimeout(r, 20));
      return { accessToken: `tok_${++n}`, expiresAt: Date.now() + HOUR };
    };
    const stores = Array.from(
      { length: 8 },
      (_, i) => new RedisTokenStore({ client: (i % 2 ? a : b).client, keyPrefix, pollIntervalMs: 5 }),
    );
    const tokens = await Promise.all(stores.map((s) => s.refresh('merchant', fetchToken, {})));
    expect(calls).toBe(1);
    expect(new Set(tokens.map((t) => t.accessToken)).size).toBe(1);
    // Its expiry is read back from Redis's PTTL, so only the token itself is compared.
    expect(await stores[1]!.get('merchant')).toMatchObject({ accessToken: tokens[0]!.accessToken });
  });

  it('RedisWebhookStore: one claim wins across connections, then the callback reads as done', async () => {
    const keyPrefix = prefix();
    const [first, second] = [
      new RedisWebhookStore({ client: a.client, keyPrefix }),
      new RedisWebhookStore({ client: b.client, keyPrefix }),
    ];
    const claims = await Promise.all([
      first.claim('payment:P1:SUCCESS', 60_000),
      second.claim('payment:P1:SUCCESS', 60_000),
    ]);
    const won = claims.filter((c) => c.acquired);
    expect(won).toHaveLength(1);
    const winner = claims[0].acquired ? first : second;
    await winner.complete('payment:P1:SUCCESS', (won[0] as { token: string }).token, HOUR);
    expect(await second.claim('payment:P1:SUCCESS', 60_000)).toEqual({ acquired: false, state: 'done' });
  });

  it('RedisRateLimiter: two connections share one budget and the limit one of them learned', async () => {
    const keyPrefix = prefix();
    const [first, second] = [
      new RedisRateLimiter({ client: a.client, keyPrefix }),
      new RedisRateLimiter({ client: b.client, keyPrefix }),
    ];
    await first.acquire('merchant', 'withdraw', { maxWaitMs: 1000 });
    first.observe('merchant', 'withdraw', { status: 200, limit: 2, remaining: 1, resetInMs: 59_990, elapsedMs: 10 });
    await new Promise((r) => setTimeout(r, 100)); // the learned limit is written in the background
    await second.acquire('merchant', 'withdraw', { maxWaitMs: 1000 });
    const refused = await second.acquire('merchant', 'withdraw', { maxWaitMs: 30 }).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(RateLimitError);
  });
});

/** Builds each of the three stores on `client`. */
const everyStore = (client: unknown, extra: object = {}) => [
  () => new RedisTokenStore({ client: client as RedisClientLike, ...extra }),
  () => new RedisWebhookStore({ client: client as RedisClientLike, ...extra }),
  () => new RedisRateLimiter({ client: client as RedisClientLike, ...extra }),
];

describe('clients the stores cannot drive', () => {
  const noop = async (): Promise<string> => 'OK';
  it.each([
    ['no client', undefined],
    ['a plain object', { get: noop }],
    ['a callback client (node-redis v3)', { send_command: noop }],
    ['a node-redis v4 client in legacyMode', { sendCommand: (): undefined => undefined, v4: {} }],
    ['a lease from createSentinel().acquire()', { sendCommand: noop, _execute: noop, release: noop }],
  ])('%s is refused at construction with a ConfigurationError naming what is supported', (_, client) => {
    for (const build of everyStore(client)) {
      let error: unknown;
      try {
        build();
      } catch (e) {
        error = e;
      }
      expect(error).toBeInstanceOf(ConfigurationError);
      expect((error as ConfigurationError).field).toBe('client');
      expect((error as Error).message).toMatch(
        /ioredis.*Cluster.*createClient\(\), createCluster\(\) or createSentinel\(\)/,
      );
    }
  });
});

it('a node-redis v4 client outside legacyMode (whose v4 getter throws) is accepted', () => {
  const client = {
    sendCommand: async (): Promise<string> => 'OK',
    get v4(): never {
      throw new Error('the client is not in "legacy mode"');
    },
  };
  for (const build of everyStore(client)) expect(build).not.toThrow();
});

/** A Logger that records what it was given. */
function recordingLogger() {
  const lines: { level: string; text: string }[] = [];
  const at = (level: string) => (text: string) => void lines.push({ level, text });
  return { logger: { debug: at('debug'), info: at('info'), warn: at('warn'), error: at('error') }, lines };
}

/** A node-redis-shaped client that answers INFO (and CONFIG GET save) as told, and records commands. */
function fakeServer(info: string, save = '3600 1') {
  const sent: string[] = [];
  const client = {
    sendCommand: async (args: string[]) => {
      sent.push(args[0] ?? '');
      if (args[0] === 'INFO') return info;
      if (args[0] === 'CONFIG') return ['save', save];
      if (args[0] === 'EVAL' || args[0] === 'EVALSHA') return 1; // a webhook claim taken
      return null;
    },
  };
  return { client, sent };
}

describe('the server check at first use', () => {
  it('Redis 4.0.14: every store operation fails with REDIS_VERSION_UNSUPPORTED, INFO asked once for all stores, logged once', async () => {
    const { client, sent } = fakeServer(
      '# Server\r\nredis_version:4.0.14\r\nredis_mode:standalone\r\n# Memory\r\nmaxmemory_policy:noeviction\r\n',
    );
    const { logger, lines } = recordingLogger();
    const tokens = new RedisTokenStore({ client, logger });
    const webhooks = new RedisWebhookStore({ client, logger });
    for (const attempt of [
      () => tokens.get('m'),
      () => webhooks.claim('k', 1000),
      () => webhooks.claim('k', 1000),
      () => tokens.set('m', { accessToken: 'x', expiresAt: Date.now() + HOUR }),
    ]) {
      const error = await attempt().then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(error).toBeInstanceOf(RedisVersionError);
      expect(error).toMatchObject({
        code: 'REDIS_VERSION_UNSUPPORTED',
        retryable: false,
        serverVersion: 'Redis 4.0.14',
      });
    }
    expect(sent).toEqual(['INFO']);
    expect(lines).toEqual([{ level: 'error', text: expect.stringContaining('Redis 4.0.14 is not supported') }]);
  });

  it('Redis 4.0.14 under RedisRateLimiter: pacing falls back to the process, never silently (the reason is logged through logger)', async () => {
    const { client } = fakeServer('# Server\r\nredis_version:4.0.14\r\n');
    const { logger, lines } = recordingLogger();
    const fallback = vi.spyOn(console, 'warn').mockImplementation(() => undefined); // the limiter's own fallback notice
    try {
      await new RedisRateLimiter({ client, logger }).acquire('m', 'other', { maxWaitMs: 1000 });
    } finally {
      fallback.mockRestore();
    }
    expect(lines).toEqual([{ level: 'error', text: expect.stringContaining('Redis 4.0.14 is not supported') }]);
  });

  it('both store codes are in the ErrorCode union', () => {
    const codes: ClientErrorCode[] = ['STORE_UNAVAILABLE', 'REDIS_VERSION_UNSUPPORTED'];
    expect([new RedisStoreError('x', 'timeout').code, new RedisVersionError('Redis 4.0.14').code]).toEqual(codes);
  });

  it.each([
    ['Redis 5.0.0', '# Server\r\nredis_version:5.0.0\r\n'],
    [
      'Valkey 8 (which also reports redis_version 7.2.4)',
      '# Server\r\nredis_version:7.2.4\r\nserver_name:valkey\r\nvalkey_version:8.0.1\r\n',
    ],
  ])('%s is accepted, with no warning', async (_, info) => {
    const { client } = fakeServer(info);
    const { logger, lines } = recordingLogger();
    await new RedisWebhookStore({ client, logger }).claim('k', 1000);
    expect(lines).toEqual([]);
  });

  it('a server that hides its version (managed Redis): one warning, and the stores go on', async () => {
    const { client } = fakeServer('# Server\r\nredis_mode:standalone\r\n');
    const { logger, lines } = recordingLogger();
    const store = new RedisWebhookStore({ client, logger });
    await store.claim('a', 1000);
    await store.claim('b', 1000);
    expect(lines).toEqual([{ level: 'warn', text: expect.stringContaining('version was not checked') }]);
  });

  it('eviction allowed and no persistence: one warning through logger, however many stores and calls share the client', async () => {
    const { client } = fakeServer(
      '# Memory\r\nmaxmemory_policy:allkeys-lru\r\n# Persistence\r\naof_enabled:0\r\n# Server\r\nredis_version:7.0.15\r\n',
      '',
    );
    const { logger, lines } = recordingLogger();
    const stores = [new RedisWebhookStore({ client, logger }), new RedisWebhookStore({ client, logger })];
    await Promise.all(stores.flatMap((s) => [s.claim('a', 1000), s.claim('b', 1000)]));
    expect(lines).toHaveLength(1);
    expect(lines[0]!.level).toBe('warn');
    expect(lines[0]!.text).toMatch(
      /^myr-gateway: Redis may lose the stores' keys: maxmemory-policy is allkeys-lru.*neither AOF nor RDB/,
    );
  });

  describe.each(CLIENT_KINDS)('a real redis-server without persistence, on %s', (kind) => {
    let server: RedisServer;
    beforeAll(async () => {
      server = await RedisServer.start({ durable: false });
    });
    afterAll(() => server?.stop());

    it('warns once through logger for the three stores sharing the client', async () => {
      const conn = await connect(kind, server.url);
      try {
        const { logger, lines } = recordingLogger();
        const [tokens, webhooks, limiter] = [
          new RedisTokenStore({ client: conn.client, logger }),
          new RedisWebhookStore({ client: conn.client, logger }),
          new RedisRateLimiter({ client: conn.client, logger }),
        ];
        await Promise.all([
          tokens.get('m'),
          webhooks.claim('k', 1000),
          limiter.acquire('m', 'other', { maxWaitMs: 1000 }),
          tokens.get('m'),
        ]);
        expect(lines).toEqual([
          { level: 'warn', text: expect.stringContaining('neither AOF nor RDB persistence is on') },
        ]);
      } finally {
        await conn.close();
      }
    });
  });
});
