/**
 * Issue 8, done-when: a burst of 500 payment creations from 4 processes sharing a
 * RedisRateLimiter, against the mock enforcing 100 per window: no 429 and all 500 created
 * within the time the limit allows. The mock's window is 2 s instead of 60 so the test takes
 * seconds; no process is told: they learn it from X-RateLimit-Reset and share it in Redis.
 */
import { expect, it } from 'vitest';
import { createMockGateway } from '../../src/testing/index.js';
import { startFleet } from './fleet.js';
import type { PacingBurst as Result } from './pacing-worker.js';

const WORKERS = 4;
const WINDOW_MS = 2000;
const mock = createMockGateway({ rateLimits: { paymentRequest: 100 }, rateLimitWindowMs: WINDOW_MS });
const fleet = startFleet(mock, './pacing-worker.ts', WORKERS);

it('4 processes × 125 payment creations at 100 per window: no 429, all 500 created, in about 4 windows', async () => {
  const started = performance.now();
  const results = await fleet.pool.all<Result>({ type: 'burst', calls: 500 / WORKERS });
  const elapsed = performance.now() - started;
  const creates = mock.requests.filter((r) => r.endpoint === 'payment.create');

  expect(results.flatMap((r) => r.errors)).toEqual([]);
  expect(results.flatMap((r) => r.warnings)).toEqual([]);
  expect(results.reduce((sum, r) => sum + r.ok, 0)).toBe(500);
  const first = Math.min(...creates.map((r) => r.at));
  const rejected = creates.filter((r) => r.status === 429).map((r) => r.at - first);
  // On failure, when the 429s came tells which window they overlapped.
  expect(rejected, `429s at ms after the first creation: ${rejected.join(', ')}`).toHaveLength(0);
  expect(creates.filter((r) => r.status === 200)).toHaveLength(500);
  expect(elapsed).toBeGreaterThanOrEqual(4 * WINDOW_MS - 50);
  // Whole-second resets make a learned window up to 1 s long; a process that has not yet
  // read the shared window asks Redis again within 1 s.
  expect(elapsed).toBeLessThan(4 * (WINDOW_MS + 1000) + 6000);
}, 60_000);
