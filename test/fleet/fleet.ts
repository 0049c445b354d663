/**
 * The set-up every fleet test shares: a real redis-server, the mock served over HTTP and a pool
 * of worker processes (half on ioredis, half on node-redis), started before the file's tests and
 * stopped after.
 */
import { afterAll, beforeAll } from 'vitest';
import type { MockGateway, MockHttpServer } from '../../src/testing/index.js';
import { RedisServer } from '../helpers/redis.js';
import { WorkerPool } from './pool.js';

export function startFleet(mock: MockGateway, script: string, workers: number) {
  const fleet = {} as { redis: RedisServer; http: MockHttpServer; pool: WorkerPool };
  beforeAll(async () => {
    fleet.redis = await RedisServer.start();
    fleet.http = await mock.serve();
    fleet.pool = await WorkerPool.start(script, workers, (i) => ({
      WORKER: String(i),
      CLIENT_KIND: i % 2 ? 'node-redis' : 'ioredis',
      REDIS_URL: fleet.redis.url,
      BASE_URL: fleet.http.baseUrl,
      MERCHANT_ID: mock.merchant.merchantId,
      API_KEY: mock.merchant.apiKey,
    }));
  }, 60_000);
  afterAll(async () => {
    await fleet.pool?.stop();
    await fleet.http?.close();
    await fleet.redis?.stop();
  });
  return fleet;
}
