/**
 * Issue 14 item 4: a slow token endpoint must not turn into a burst of token requests. While
 * one process holds the refresh lock (and keeps renewing it), the other processes wait for its
 * token for as long as their calls may last, instead of giving up after a fixed time and
 * fetching their own. 8 worker processes (half ioredis, half node-redis), one real
 * redis-server, the mock served over HTTP with delay faults on `POST /auth/token`.
 */
import { afterEach, beforeAll, expect, it } from 'vitest';
import { createMockGateway } from '../../src/testing/index.js';
import { connect, rawCommand } from '../helpers/redis.js';
import { startFleet } from './fleet.js';

const WORKERS = 8;
const CALLS = 5;
const mock = createMockGateway({ rateLimits: { paymentRequest: 1_000_000, other: 1_000_000 } });
const fleet = startFleet(mock, './token-slow-worker.ts', WORKERS);

const tokenRequests = () => mock.requests.filter((r) => r.endpoint === 'auth').length;
type Result = { ok: number; errors: string[]; warnings: string[] };

let flush: () => Promise<unknown>;
beforeAll(async () => {
  const { client } = await connect('ioredis', fleet.redis.url);
  flush = () => rawCommand(client, ['FLUSHALL']);
});
afterEach(async () => {
  await flush();
  mock.reset();
});

it('token endpoint taking 20 s: exactly one POST /auth/token for the fleet, every call succeeds', async () => {
  mock.fault({ endpoint: 'auth', response: { type: 'delay', ms: 20_000 } });
  const results = await fleet.pool.all<Result>({ type: 'run', round: 1, calls: CALLS, timeout: 30_000 });
  expect(results.flatMap((r) => r.errors)).toEqual([]);
  expect(results.flatMap((r) => r.warnings).filter((w) => /token store/.test(w))).toEqual([]);
  expect(results.reduce((sum, r) => sum + r.ok, 0)).toBe(WORKERS * CALLS);
  expect(tokenRequests()).toBe(1);
}, 60_000);

it('a refresh longer than one attempt (a slow 503, then a slow success): the waiters wait for the holder, no token request of their own', async () => {
  // About 19 s in all against a per-attempt timeout of 12 s: only the holder's two attempts reach the service.
  mock.fault({ endpoint: 'auth', response: { type: 'delay', ms: 9_000 } });
  mock.fault({ endpoint: 'auth', response: { type: 'status', status: 503 } });
  mock.fault({ endpoint: 'auth', response: { type: 'delay', ms: 9_000 } });
  const results = await fleet.pool.all<Result>({ type: 'run', round: 2, calls: CALLS, timeout: 12_000 });
  expect(results.flatMap((r) => r.errors)).toEqual([]);
  expect(results.flatMap((r) => r.warnings).filter((w) => /token store/.test(w))).toEqual([]);
  expect(results.reduce((sum, r) => sum + r.ok, 0)).toBe(WORKERS * CALLS);
  expect(tokenRequests()).toBe(2);
}, 60_000);
