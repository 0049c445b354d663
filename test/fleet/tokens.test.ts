/**
 * Issue 8, done-when: 16 worker processes × 50 concurrent calls on a cold cache, all
 * sharing a RedisTokenStore, cause exactly one POST /auth/token at the mock; a
 * TOKEN_EXPIRED for every token mid-run causes exactly one more. Half the workers use
 * ioredis, half node-redis, against one real redis-server; the mock is served over HTTP.
 */
import { expect, it } from 'vitest';
import { createMockGateway } from '../../src/testing/index.js';
import { startFleet } from './fleet.js';

const WORKERS = 16;
const CALLS = 50;
const mock = createMockGateway({ rateLimits: { paymentRequest: 1_000_000, other: 1_000_000 } });
const fleet = startFleet(mock, './token-worker.ts', WORKERS);

const tokenRequests = () => mock.requests.filter((r) => r.endpoint === 'auth').length;
type Result = { ok: number; errors: string[]; warnings: string[] };

// What each worker's client warned, over the whole file (it warns once per process and kind).
// Stopping Redis must make every worker warn that the store's get failed; a loaded machine
// may add a store that answered late; any other warning is a failure.
const warned: string[][] = Array.from({ length: WORKERS }, () => []);
const TOKEN_STORE_WARNING =
  /^myr-gateway: the token store's (get|set|delete|refresh) (failed|did not answer in time); /;
function collect(results: Result[]): Result[] {
  results.forEach((r, worker) => warned[worker]?.push(...r.warnings));
  return results;
}

it('one token for the whole fleet on a cold cache, and one replacement after TOKEN_EXPIRED', async () => {
  const first = collect(await fleet.pool.all<Result>({ type: 'run', round: 1, calls: CALLS }));
  expect(first.flatMap((r) => r.errors)).toEqual([]);
  expect(first.reduce((sum, r) => sum + r.ok, 0)).toBe(WORKERS * CALLS);
  expect(tokenRequests()).toBe(1);

  // Every token issued so far is now rejected with 401 TOKEN_EXPIRED.
  mock.expireTokens();
  const second = collect(await fleet.pool.all<Result>({ type: 'run', round: 2, calls: CALLS }));
  expect(second.flatMap((r) => r.errors)).toEqual([]);
  expect(second.reduce((sum, r) => sum + r.ok, 0)).toBe(WORKERS * CALLS);
  expect(tokenRequests()).toBe(2);
  expect(mock.requests.filter((r) => r.endpoint === 'payment.create' && r.status === 401).length).toBeGreaterThan(0);
  expect(warned.flat().filter((w) => !TOKEN_STORE_WARNING.test(w))).toEqual([]);
}, 60_000);

it('Redis stopped mid-run: calls keep succeeding on the in-process token; once it is back, one replacement for the fleet again', async () => {
  const before = tokenRequests();
  await fleet.redis.stop();
  const down = collect(await fleet.pool.all<Result>({ type: 'run', round: 3, calls: 10 }));
  expect(down.flatMap((r) => r.errors)).toEqual([]);
  expect(down.reduce((sum, r) => sum + r.ok, 0)).toBe(WORKERS * 10);
  expect(tokenRequests()).toBe(before); // each process kept the token it held
  expect(
    warned.map((lines) =>
      lines.some((w) =>
        /^myr-gateway: the token store's get (failed|did not answer in time); using the token held in this process\.$/.test(
          w,
        ),
      ),
    ),
  ).toEqual(Array.from({ length: WORKERS }, () => true));

  await fleet.redis.start(); // same port, empty (no persistence): the clients reconnect by themselves
  await new Promise((resolve) => setTimeout(resolve, 300));
  mock.expireTokens();
  const back = collect(await fleet.pool.all<Result>({ type: 'run', round: 4, calls: 10 }));
  expect(back.flatMap((r) => r.errors)).toEqual([]);
  expect(back.reduce((sum, r) => sum + r.ok, 0)).toBe(WORKERS * 10);
  expect(tokenRequests()).toBe(before + 1);
  expect(warned.flat().filter((w) => !TOKEN_STORE_WARNING.test(w))).toEqual([]);
}, 60_000);
