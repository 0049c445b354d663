/**
 * The harness the Redis pacing tests share: one real redis-server for the test file, and per
 * test a rate-limited service (test/helpers/rate-limited-server.ts) and Redis connections that
 * are all closed after the test, whatever it did.
 */
import { afterAll, afterEach, beforeAll, expect } from 'vitest';
import { MemoryTokenStore, MyrGateway, type MyrGatewayOptions } from '../../src/index.js';
import { RedisRateLimiter } from '../../src/redis/index.js';
import { type RateLimitedService, startRateLimitedService } from './rate-limited-server.js';
import { type ClientKind, connect, rawCommand, RedisServer } from './redis.js';

/** One process of a merchant's fleet, as {@link RedisPacingHarness.fleetProcess} starts it. */
export interface FleetProcess {
  gateway: MyrGateway;
  /** What its client and limiter warned (and logged as errors), in order. */
  warnings: string[];
  /** A raw command on its connection. */
  send: (args: string[]) => Promise<unknown>;
}

export interface RedisPacingHarness {
  /** The file's redis-server (started before the first test). */
  readonly redis: RedisServer;
  /** The service this test started (throws when it started none). */
  readonly service: RateLimitedService;
  /** Starts this test's service: at most `limit` payment creations per sliding `windowMs`; closed after the test. */
  startService(limit: number, windowMs: number): Promise<RateLimitedService>;
  /** A connection of its own to the file's redis-server (one process of the fleet); closed after the test. */
  connect(kind: ClientKind): ReturnType<typeof connect>;
  /**
   * One process of the fleet: a client of this test's service with a `RedisRateLimiter` under
   * `keyPrefix` on a connection of its own, a token of its own, its warnings kept.
   */
  fleetProcess(kind: ClientKind, keyPrefix: string, extra?: Partial<MyrGatewayOptions>): Promise<FleetProcess>;
}

/** The payment bucket's keys under `keyPrefix` (after a first create wrote them). */
export async function paymentKeys(send: (args: string[]) => Promise<unknown>, keyPrefix: string) {
  const [cfg] = (await send(['KEYS', `${keyPrefix}rate-cfg:*`])) as string[];
  expect(cfg).toBeDefined();
  const id = (cfg as string).slice(`${keyPrefix}rate-cfg:`.length);
  return { cfg: cfg as string, slots: `${keyPrefix}rate:${id}`, probe: `${keyPrefix}rate-probe:${id}` };
}

/** Registers the file's hooks (call it at the top level of a test file) and answers the harness. */
export function redisPacingHarness(): RedisPacingHarness {
  let redis: RedisServer | undefined;
  let service: RateLimitedService | undefined;
  const closers: (() => Promise<void>)[] = [];
  beforeAll(async () => {
    redis = await RedisServer.start();
  });
  afterAll(() => redis?.stop());
  afterEach(async () => {
    await service?.close();
    service = undefined;
    for (const close of closers.splice(0)) await close();
  });
  const harness: RedisPacingHarness = {
    get redis() {
      if (!redis) throw new Error('the redis-server starts in beforeAll: use the harness inside a test');
      return redis;
    },
    get service() {
      if (!service) throw new Error('this test started no service: call startService first');
      return service;
    },
    async startService(limit, windowMs) {
      await service?.close();
      service = await startRateLimitedService(limit, windowMs);
      return service;
    },
    async connect(kind) {
      const conn = await connect(kind, harness.redis.url);
      closers.push(conn.close);
      return conn;
    },
    async fleetProcess(kind, keyPrefix, extra = {}) {
      const conn = await harness.connect(kind);
      const warnings: string[] = [];
      const capture = (m: unknown) => void warnings.push(String(m));
      const gateway = new MyrGateway({
        baseUrl: harness.service.baseUrl,
        merchantId: 'MERCHANT_FLEET_PACING',
        apiKey: 'sk_test_fleet_pacing',
        allowInsecureLoopback: true,
        tokenStore: new MemoryTokenStore(),
        // Without a logger of its own, the limiter warns through its client's.
        rateLimiter: new RedisRateLimiter({ client: conn.client, keyPrefix, timeoutMs: 5000 }),
        logger: { debug: () => undefined, info: () => undefined, warn: capture, error: capture },
        ...extra,
      });
      return { gateway, warnings, send: (args) => rawCommand(conn.client, args) };
    },
  };
  return harness;
}
