/**
 * Issue 8, done-when: 8 processes receive the same signed callback at the same moment
 * through one RedisWebhookStore and the handler runs once; a failing handler runs again
 * on the next delivery, once; with Redis stopped every delivery is answered 503 and none
 * runs; with Redis back the shared ledger works again without restarting anything.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { signCallback } from '../../src/testing/index.js';
import { RedisServer } from '../helpers/redis.js';
import { WorkerPool } from './pool.js';

const WORKERS = 8;
const API_KEY = 'sk_test_fleet_webhooks_0001';
let redis: RedisServer;
let pool: WorkerPool;

beforeAll(async () => {
  redis = await RedisServer.start();
  pool = await WorkerPool.start('./webhook-worker.ts', WORKERS, (i) => ({
    CLIENT_KIND: i % 2 ? 'node-redis' : 'ioredis',
    REDIS_URL: redis.url,
    API_KEY,
  }));
}, 60_000);
afterAll(async () => {
  await pool?.stop();
  await redis?.stop();
});

type Answer = { status: number; outcome: string; ran: number };
let n = 0;
async function callback() {
  n += 1;
  const { rawBody, headers } = await signCallback(API_KEY, {
    payment_id: `PAY_FLEET_${n}`,
    reference_id: `ORDER${n}`,
    amount: 120.5,
    status: 'SUCCESS',
  });
  return { body: rawBody, headers };
}
const deliverToAll = async (delivery: { body: string; headers: Record<string, string> }, fail = false) =>
  pool.all<Answer>({ type: 'deliver', ...delivery, fail });
const runs = (answers: Answer[]) => answers.reduce((sum, a) => sum + a.ran, 0);

it('the same callback at 8 processes at once runs the handler once; its retries run nothing', async () => {
  const delivery = await callback();
  const answers = await deliverToAll(delivery);
  expect(runs(answers)).toBe(1);
  expect(answers.filter((a) => a.outcome === 'processed')).toHaveLength(1);
  // The others were told to come back later (409) or that it is done (200 duplicate).
  for (const a of answers.filter((x) => x.outcome !== 'processed')) expect([409, 200]).toContain(a.status);

  const retry = await deliverToAll(delivery);
  expect(runs(retry)).toBe(0);
  expect(retry.every((a) => a.status === 200 && a.outcome === 'duplicate')).toBe(true);
}, 30_000);

it('a handler failure is not acknowledged and the next delivery runs it again, once', async () => {
  const delivery = await callback();
  const failed = await deliverToAll(delivery, true);
  expect(runs(failed)).toBeGreaterThanOrEqual(1);
  expect(failed.some((a) => a.status === 200)).toBe(false);

  const next = await deliverToAll(delivery);
  expect(runs(next)).toBe(1);
  expect(next.filter((a) => a.outcome === 'processed')).toHaveLength(1);
}, 30_000);

it('Redis stopped: every delivery is answered 503 and none runs; Redis back: exactly-once resumes', async () => {
  const handledBefore = await callback();
  expect(runs(await deliverToAll(handledBefore))).toBe(1);

  await redis.stop();
  const during = await callback();
  const down = await deliverToAll(during);
  expect(down.map((a) => a.status)).toEqual(Array(WORKERS).fill(503));
  expect(runs(down)).toBe(0);

  await redis.start(); // same port, empty (no persistence in this test)
  await pool.all({ type: 'redis-ready' });
  const after = await deliverToAll(during);
  expect(runs(after)).toBe(1);
  expect(runs(await deliverToAll(during))).toBe(0);
}, 30_000);
