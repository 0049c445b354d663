/**
 * One merchant process: a MyrGateway whose tokens live in Redis. On `{ type: 'run', calls }`
 * it makes that many concurrent payment creations and reports how they ended.
 */
import { RedisTokenStore } from '../../src/redis/index.js';
import type { ClientKind } from '../helpers/redis.js';
import { connectTarget, targetFromEnv } from '../helpers/redis-topologies.js';
import { burstPayment, serveRequests, settle, workerEnv, workerGateway } from './pool.js';

const { client } = await connectTarget(workerEnv('CLIENT_KIND') as ClientKind, targetFromEnv());
const gateway = workerGateway({
  maxRetries: 0,
  tokenStore: new RedisTokenStore({ client, pollIntervalMs: 10 }),
});
let n = 0;

serveRequests((message) =>
  settle(Array.from({ length: message.calls as number }, () => gateway.payments.create(burstPayment(`W${workerEnv('WORKER')}R${message.round as number}N${++n}`)))),
);
