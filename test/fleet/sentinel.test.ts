/**
 * Issue 14, done-when: the webhook fleet on a real Sentinel set (master, replica, sentinel), half
 * the receivers on Sentinel-managed ioredis, half on node-redis `createSentinel`. The master is
 * killed mid-run and the sentinel promotes the replica: deliveries meanwhile are answered 503
 * and sent again by the sender, as the gateway does, and every callback is handled exactly once.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { signCallback } from '../../src/testing/index.js';
import { type DeliveryAnswer, sleep, startRedis, workerRedisEnv } from './fleet.js';
import { WorkerPool } from './pool.js';

const API_KEY = 'sk_test_fleet_sentinel_0001';
const CALLBACKS = 80;
let redis: Awaited<ReturnType<typeof startRedis>>;
let pool: WorkerPool;
beforeAll(async () => {
  redis = await startRedis('sentinel');
  pool = await WorkerPool.start('./webhook-worker.ts', 4, (i) => ({ ...workerRedisEnv(i, redis.target), API_KEY }));
}, 60_000);
afterAll(async () => {
  await pool?.stop();
  await redis?.stop();
});

/** Each receiver's list of the payment ids whose handler it ran. */
const handledPerReceiver = () => pool.all<string[]>({ type: 'ran' });

it('master killed mid-run: every callback handled exactly once, none lost', async () => {
  const statuses: number[] = [];
  const ids = Array.from({ length: CALLBACKS }, (_, i) => `PAY_SENTINEL_${i}`);
  const deadline = Date.now() + 30_000;
  // The sender, as the gateway: delivers until answered 200, to the next receiver each time, 200 ms apart.
  const deliver = async (
    delivery: { body: string; headers: Record<string, string> },
    i: number,
  ): Promise<DeliveryAnswer> => {
    for (let attempt = 0; ; attempt++) {
      const answer = await pool.workers[(i + attempt) % 4]!.request<DeliveryAnswer>({ type: 'deliver', ...delivery });
      statuses.push(answer.status);
      if (answer.status === 200) return answer;
      if (Date.now() > deadline) throw new Error(`callback ${i} still answered ${answer.status} after 30 s`);
      await sleep(200);
    }
  };
  const callbacks = await Promise.all(
    ids.map(async (payment_id, i) => {
      const { rawBody, headers } = await signCallback(API_KEY, {
        payment_id,
        reference_id: `ORDER${i}`,
        amount: 88,
        status: 'SUCCESS',
      });
      return { body: rawBody, headers };
    }),
  );
  const sent: Promise<DeliveryAnswer>[] = [];
  let failover: Promise<void> | undefined;
  for (const [i, callback] of callbacks.entries()) {
    if (i === 20) failover = redis.sentinel!.killMaster();
    sent.push(deliver(callback, i));
    await sleep(25);
  }
  await Promise.all(sent);
  await failover;
  expect(statuses).toContain(503); // the failover happened while callbacks were arriving
  const handled = await handledPerReceiver();
  expect(handled.flat().toSorted()).toEqual(ids.toSorted());
  for (const ran of handled) expect(ran.length).toBeGreaterThan(0); // both clients took part

  // The gateway's next retry of every callback, now on the promoted replica, each to another
  // receiver: all answered 200 (a client still finding the new master answers 503 first, and
  // the sender retries), and none runs its handler again.
  const retries = await Promise.all(callbacks.map((callback, i) => deliver(callback, i + 1)));
  expect(retries.map((a) => a.outcome)).toEqual(Array(CALLBACKS).fill('duplicate'));
  expect((await handledPerReceiver()).flat()).toHaveLength(CALLBACKS);
}, 60_000);
