/**
 * The set-up every fleet test shares: real Redis (one server by default, or a 3-master Cluster
 * or a Sentinel set), the mock served over HTTP and a pool of worker processes (half on ioredis,
 * half on node-redis), started before the file's tests and stopped after.
 */
import { afterAll, beforeAll } from 'vitest';
import type { MockGateway, MockHttpServer } from '../../src/testing/index.js';
import { RedisServer } from '../helpers/redis.js';
import { RedisClusterServers, RedisSentinelServers, type RedisTarget } from '../helpers/redis-topologies.js';
import { WorkerPool } from './pool.js';

/** Which Redis a fleet runs on. */
export type Topology = 'single' | 'cluster' | 'sentinel';

/** What a webhook worker answers for one delivery: the HTTP status, the handler's outcome and how often it ran. */
export type DeliveryAnswer = { status: number; outcome: string; ran: number };

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Redis of `topology`, started; `target` is what workers connect to. */
export async function startRedis(
  topology: Topology,
): Promise<{ target: RedisTarget; stop: () => Promise<void>; single?: RedisServer; sentinel?: RedisSentinelServers }> {
  if (topology === 'cluster') {
    const cluster = await RedisClusterServers.start();
    return { target: cluster.target, stop: () => cluster.stop() };
  }
  if (topology === 'sentinel') {
    const sentinel = await RedisSentinelServers.start();
    return { target: sentinel.target, stop: () => sentinel.stop(), sentinel };
  }
  const single = await RedisServer.start();
  return { target: { topology: 'single', url: single.url }, stop: () => single.stop(), single };
}

/** The environment of worker `i` of a pool on `target`: alternate clients, same Redis. */
export function workerRedisEnv(i: number, target: RedisTarget): Record<string, string> {
  return { WORKER: String(i), CLIENT_KIND: i % 2 ? 'node-redis' : 'ioredis', REDIS_TARGET: JSON.stringify(target) };
}

export function startFleet(mock: MockGateway, script: string, workers: number, topology: Topology = 'single') {
  const fleet = {} as { redis: RedisServer; stopRedis: () => Promise<void>; http: MockHttpServer; pool: WorkerPool };
  beforeAll(async () => {
    const redis = await startRedis(topology);
    if (redis.single) fleet.redis = redis.single;
    fleet.stopRedis = redis.stop;
    fleet.http = await mock.serve();
    fleet.pool = await WorkerPool.start(script, workers, (i) => ({
      ...workerRedisEnv(i, redis.target),
      BASE_URL: fleet.http.baseUrl,
      MERCHANT_ID: mock.merchant.merchantId,
      API_KEY: mock.merchant.apiKey,
    }));
  }, 60_000);
  afterAll(async () => {
    await fleet.pool?.stop();
    await fleet.http?.close();
    await fleet.stopRedis?.();
  });
  return fleet;
}
