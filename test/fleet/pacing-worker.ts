/**
 * One merchant process pacing through a RedisRateLimiter. On `{ type: 'burst', calls }` it
 * makes that many concurrent payment creations and reports how they ended.
 */
import { RedisRateLimiter, RedisTokenStore } from '../../src/redis/index.js';
import type { ClientKind } from '../helpers/redis.js';
import { connectTarget, targetFromEnv } from '../helpers/redis-topologies.js';
import { burstPayment, serveRequests, settle, workerEnv, workerGateway } from './pool.js';

const { client } = await connectTarget(workerEnv('CLIENT_KIND') as ClientKind, targetFromEnv());
const gateway = workerGateway({
  tokenStore: new RedisTokenStore({ client, pollIntervalMs: 10 }),
  // A loaded CI machine can take longer than the default 1 s per command; falling back to
  // in-process pacing (the fail-open path, tested in redis-rate-limiter.test.ts) is not what this tests.
  rateLimiter: new RedisRateLimiter({ client, timeoutMs: 10_000 }),
});
let n = 0;

serveRequests((message) =>
  settle(Array.from({ length: message.calls as number }, () => gateway.payments.create(burstPayment(`P${workerEnv('WORKER')}N${++n}`)))),
);
