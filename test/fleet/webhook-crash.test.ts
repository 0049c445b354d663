/**
 * A receiver killed (SIGKILL) mid-handler, with the in-window recovery a merchant may choose
 * (`inFlightTtlMs: 4_000`): the gateway delivers 3 times (immediately, about 1 s later, about
 * 5 s after that) and one of its own retries runs the handler on another process. On the
 * default claim (30 s, which keeps a stalled live handler's claim) every retry meets the dead
 * claim instead and the reconciliation job recovers it. And a live slow handler keeps its claim
 * through those same retries (renewal). Real processes on both Redis clients.
 *
 * Deliveries are timed as the gateway's schedule at its earliest: "about" is taken as 80% of
 * each delay (RETRY_DELAY_SLACK in src/webhooks/delivery-policy.ts).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { signCallback } from '../../src/testing/index.js';
import { GATEWAY_RETRY_DELAYS_MS } from '../../src/webhooks/index.js';
import { RedisServer } from '../helpers/redis.js';
import { type DeliveryAnswer, sleep } from './fleet.js';
import { WorkerPool } from './pool.js';

const API_KEY = 'sk_test_fleet_webhook_crash_01';
// Pairs (crashing receiver, the one the retries reach) on different clients, both ways round;
// the first four on the 4 s claim, the others on the default.
const KINDS = [
  'ioredis',
  'node-redis',
  'node-redis',
  'ioredis',
  'ioredis',
  'node-redis',
  'node-redis',
  'ioredis',
] as const;
const IN_WINDOW = 4;
let redis: RedisServer;
let pool: WorkerPool;

beforeAll(async () => {
  redis = await RedisServer.start();
  pool = await WorkerPool.start('./webhook-worker.ts', KINDS.length, (i) => ({
    CLIENT_KIND: KINDS[i] as string,
    REDIS_URL: redis.url,
    API_KEY,
    ...(i < IN_WINDOW ? { IN_FLIGHT_TTL_MS: '4000' } : {}),
  }));
}, 60_000);
afterAll(async () => {
  await pool?.stop();
  await redis?.stop();
});

/** When the gateway's retries come after a failed delivery, at their earliest (80% of "about"). */
const RETRY_AT_MS = GATEWAY_RETRY_DELAYS_MS.map(
  (_, i) => 0.8 * GATEWAY_RETRY_DELAYS_MS.slice(0, i + 1).reduce((a, b) => a + b, 0),
);

let n = 0;
async function callback() {
  n += 1;
  const { rawBody, headers } = await signCallback(API_KEY, {
    payment_id: `PAY_CRASH_${n}`,
    reference_id: `ORDERCRASH${n}`,
    amount: 50,
    status: 'SUCCESS',
  });
  return { body: rawBody, headers };
}

/** The gateway's retries after a failed first delivery, all to worker `to`; returns their answers. */
async function retries(
  to: number,
  delivery: { body: string; headers: Record<string, string> },
  since: number,
): Promise<DeliveryAnswer[]> {
  const answers: DeliveryAnswer[] = [];
  for (const at of RETRY_AT_MS) {
    await sleep(Math.max(0, since + at - Date.now()));
    const answer = await pool.workers[to]!.request<DeliveryAnswer>({ type: 'deliver', ...delivery });
    answers.push(answer);
    if (answer.status === 200) break; // acknowledged: the gateway stops delivering
  }
  return answers;
}

describe.each([
  [0, 1],
  [2, 3],
])('receiver %i killed mid-handler, retries reach receiver %i', (crashing, survivor) => {
  it(`on inFlightTtlMs: 4_000, the gateway's own retries run the handler on another process (${KINDS[crashing]} → ${KINDS[survivor]})`, async () => {
    const delivery = await callback();
    await pool.workers[crashing]!.request({ type: 'start', ...delivery, holdMs: 60_000 });
    await pool.kill(crashing);
    const answers = await retries(survivor, delivery, Date.now());
    expect(answers.at(-1)).toMatchObject({ status: 200, outcome: 'processed', ran: 1 });
    expect(answers.length).toBeLessThanOrEqual(GATEWAY_RETRY_DELAYS_MS.length);
  }, 20_000);
});

it('on the default claim, every retry meets the crashed handler’s claim (409): the reconciliation job recovers it, never a second run of a stalled one', async () => {
  const delivery = await callback();
  await pool.workers[6]!.request({ type: 'start', ...delivery, holdMs: 60_000 });
  await pool.kill(6);
  const answers = await retries(7, delivery, Date.now());
  expect(answers.map((a) => [a.status, a.ran])).toEqual(RETRY_AT_MS.map(() => [409, 0]));
}, 20_000);

it('a live slow handler keeps its claim through every retry: they are answered 409 and do not run it', async () => {
  const delivery = await callback();
  const slowMs = RETRY_AT_MS.at(-1)! + 2000;
  const first = pool.workers[4]!.request<DeliveryAnswer>({ type: 'deliver', ...delivery, holdMs: slowMs });
  const answers = await retries(5, delivery, Date.now());
  expect(answers.map((a) => [a.status, a.ran])).toEqual(RETRY_AT_MS.map(() => [409, 0]));
  expect(await first).toMatchObject({ status: 200, outcome: 'processed', ran: 1 });
}, 30_000);
