/**
 * Issue 14, done-when: the fleet on a real 3-master Redis Cluster, half the processes on ioredis
 * `Cluster`, half on node-redis `createCluster`. 8 processes × 20 concurrent calls on a cold
 * cache make exactly one POST /auth/token; 4 receivers each get all 4 deliveries of 100
 * callbacks at once, and every callback's handler runs exactly once.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { createMockGateway, signCallback, type MockHttpServer } from '../../src/testing/index.js';
import { startRedis, workerRedisEnv } from './fleet.js';
import { WorkerPool } from './pool.js';

const mock = createMockGateway({ rateLimits: { paymentRequest: 1_000_000, other: 1_000_000 } });
let redis: Awaited<ReturnType<typeof startRedis>>;
let http: MockHttpServer;
beforeAll(async () => {
  redis = await startRedis('cluster');
  http = await mock.serve();
}, 60_000);
afterAll(async () => {
  await http?.close();
  await redis?.stop();
});

type Result = { ok: number; errors: string[] };
type Answer = { status: number; outcome: string; ran: number };

it('8 processes × 20 calls on a cold cache: exactly one token request for the fleet', async () => {
  const pool = await WorkerPool.start('./token-worker.ts', 8, (i) => ({
    ...workerRedisEnv(i, redis.target),
    BASE_URL: http.baseUrl,
    MERCHANT_ID: mock.merchant.merchantId,
    API_KEY: mock.merchant.apiKey,
  }));
  try {
    const results = await pool.all<Result>({ type: 'run', round: 1, calls: 20 });
    expect(results.flatMap((r) => r.errors)).toEqual([]);
    expect(results.reduce((sum, r) => sum + r.ok, 0)).toBe(160);
    expect(mock.requests.filter((r) => r.endpoint === 'auth')).toHaveLength(1);
  } finally {
    await pool.stop();
  }
}, 60_000);

it('4 receivers × 100 callbacks × 4 deliveries at once: each callback handled exactly once', async () => {
  const API_KEY = 'sk_test_fleet_cluster_0001';
  const pool = await WorkerPool.start('./webhook-worker.ts', 4, (i) => ({
    ...workerRedisEnv(i, redis.target),
    API_KEY,
  }));
  try {
    const ids = Array.from({ length: 100 }, (_, i) => `PAY_CLUSTER_${i}`);
    const answers = await Promise.all(
      ids.map(async (payment_id, i) => {
        const { rawBody, headers } = await signCallback(API_KEY, {
          payment_id,
          reference_id: `ORDER${i}`,
          amount: 120.5,
          status: 'SUCCESS',
        });
        return pool.all<Answer>({ type: 'deliver', body: rawBody, headers });
      }),
    );
    for (const deliveries of answers) {
      expect(deliveries.filter((a) => a.outcome === 'processed')).toHaveLength(1);
      // The others were told it is in flight (409: the gateway retries) or already done (200).
      for (const a of deliveries.filter((x) => x.outcome !== 'processed')) expect([409, 200]).toContain(a.status);
    }
    const ran = (await pool.all<string[]>({ type: 'ran' })).flat();
    expect(ran.toSorted()).toEqual(ids.toSorted());
  } finally {
    await pool.stop();
  }
}, 60_000);
