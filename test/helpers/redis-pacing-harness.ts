/**
 * The harness the Redis pacing tests share: one real redis-server for the test file, and per
 * test a rate-limited service (test/helpers/rate-limited-server.ts) and Redis connections that
 * are all closed after the test, whatever it did.
 */
import { afterAll, afterEach, beforeAll } from 'vitest';
import { type RateLimitedService, startRateLimitedService } from './rate-limited-server.js';
import { type ClientKind, connect, RedisServer } from './redis.js';

export interface RedisPacingHarness {
  /** The file's redis-server (started before the first test). */
  readonly redis: RedisServer;
  /** The service this test started (throws when it started none). */
  readonly service: RateLimitedService;
  /** Starts this test's service: at most `limit` payment creations per sliding `windowMs`; closed after the test. */
  startService(limit: number, windowMs: number): Promise<RateLimitedService>;
  /** A connection of its own to the file's redis-server (one process of the fleet); closed after the test. */
  connect(kind: ClientKind): ReturnType<typeof connect>;
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
  };
  return harness;
}
