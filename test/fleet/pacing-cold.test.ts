/**
 * Issue 14, done-when: 90 concurrent payment creations from cold, across 3 processes sharing a
 * RedisRateLimiter (on ioredis and node-redis), against a real HTTP service on 127.0.0.1 that
 * enforces 30 per 6 s (a limit lower than the published 100 a minute, which nobody tells the
 * processes): at most one 429, and all created within 1.3× the time the limit allows.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { type RateLimitedService, startRateLimitedService } from '../helpers/rate-limited-server.js';
import { RedisServer } from '../helpers/redis.js';
import type { PacingBurst as Result } from './pacing-worker.js';
import { WorkerPool } from './pool.js';

const LIMIT = 30;
const WINDOW_MS = 6000;
const WORKERS = 3;
/** The shortest time 90 creations at 30 per window can take: the third 30 start two windows after the first. */
const IDEAL_MS = (Math.ceil(90 / LIMIT) - 1) * WINDOW_MS;

let redis: RedisServer;
let service: RateLimitedService;
let pool: WorkerPool;
beforeAll(async () => {
  redis = await RedisServer.start();
  service = await startRateLimitedService(LIMIT, WINDOW_MS);
  pool = await WorkerPool.start('./pacing-worker.ts', WORKERS, (i) => ({
    WORKER: String(i),
    CLIENT_KIND: i % 2 ? 'node-redis' : 'ioredis',
    REDIS_URL: redis.url,
    BASE_URL: service.baseUrl,
    MERCHANT_ID: 'MERCHANT_FLEET_COLD',
    API_KEY: 'sk_test_fleet_cold',
  }));
}, 60_000);
afterAll(async () => {
  await pool?.stop();
  await service?.close();
  await redis?.stop();
});

it('3 processes × 30 creations from cold at 30 per 6 s: at most one 429, all 90 created within 1.3× the ideal', async () => {
  const started = performance.now();
  const results = await pool.all<Result>({ type: 'burst', calls: 90 / WORKERS });
  const elapsed = performance.now() - started;

  expect(results.flatMap((r) => r.errors)).toEqual([]);
  // No process fell back to pacing alone (a Redis reply later than a call's store budget, say).
  expect(results.flatMap((r) => r.warnings)).toEqual([]);
  expect(results.reduce((sum, r) => sum + r.ok, 0)).toBe(90);
  expect(service.created.size).toBe(90);
  const first = Math.min(...service.creates.map((c) => c.at));
  const rejected = service.creates.filter((c) => c.status === 429).map((c) => c.at - first);
  // On failure, when the 429s came tells which window they overlapped.
  expect(rejected.length, `429s at ms after the first creation: ${rejected.join(', ')}`).toBeLessThanOrEqual(1);
  expect(elapsed).toBeLessThan(1.3 * IDEAL_MS);
}, 60_000);

it("3 processes from cold against 30 per 2.4 s (a window not whole seconds): the fleet's one edge probe is refused, exactly one 429, every creation made once", async () => {
  // The fleet's edge probe goes a whole-second window (2 s) after a lone request's answer (as the
  // fleet's Lua learns it): here up to 400 ms before the edge (the lone request's arrival + 2.4 s),
  // less the time from that arrival to its answer being learned, so the service refuses it unless
  // a loaded machine sends it that late (on two busy cores the fleet's probe came up to 170 ms
  // after its plan: a window 100 ms past the whole second would see it accepted, and no 429); its
  // create is sent again after Retry-After.
  service.setWindow(2400);
  // The merchant's token first (a status query: not a payment creation, not counted), so the lone
  // request's time is its slot and its own round trip only.
  await pool.all({ type: 'token', merchantId: 'MERCHANT_FLEET_EDGE' });
  // The probe is planned after a lone request sent and answered within one second (edge-probe.ts):
  // the burst starts 10 ms into a second, so that request does unless it takes 990 ms. Its reset
  // is then 3 s into the service's clock, and a whole-second window is 2 s, if it arrives less
  // than 600 ms into its second (two busy cores made it 370 ms, the token fetched in the burst).
  await new Promise((resolve) => setTimeout(resolve, 1000 - (Date.now() % 1000) + 10));
  const results = await pool.all<Result>({ type: 'burst', calls: 90 / WORKERS, merchantId: 'MERCHANT_FLEET_EDGE' });

  expect(results.flatMap((r) => r.errors)).toEqual([]);
  expect(results.flatMap((r) => r.warnings)).toEqual([]);
  expect(results.reduce((sum, r) => sum + r.ok, 0)).toBe(90);
  // Every creation the service saw is one of this burst's (`P<worker>N<n>`, each worker's n
  // following on from the first test's 30).
  expect(service.creates.filter((c) => !/^P[0-2]N([3-5][0-9]|60)$/.test(c.ref))).toEqual([]);
  const first = Math.min(...service.creates.map((c) => c.at));
  const at = (c: { at: number; status: number; ref: string }) => `${c.at - first}:${c.status}:${c.ref}`;
  const rejected = service.creates.filter((c) => c.status === 429);
  // On failure: how far into its second the lone request came (it must be under 600 ms for the
  // probe to be planned a whole second short), which calls opened the first window (the lone
  // request first), and what arrived near the edge; each as ms after the first:status:reference.
  const opening = service.creates.slice(0, 3);
  const nearEdge = service.creates.filter((c) => c.at - first > 1500 && c.at - first < 3500);
  const trace = `first ${first % 1000} ms into its second; opened by ${opening.map(at).join(' ')}; near the edge: ${nearEdge.map(at).join(' ')}`;
  expect(rejected.length, `429s: ${rejected.map(at).join(', ')}; ${trace}`).toBe(1);
  // Each creation accepted once: 90 accepted, 90 distinct references.
  expect(service.creates.filter((c) => c.status === 200).length).toBe(90);
  expect(service.created.size).toBe(90);
}, 60_000);
