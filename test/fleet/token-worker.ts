/**
 * One merchant process: a MyrGateway whose tokens live in Redis. On `{ type: 'run', calls }`
 * it makes that many concurrent payment creations and reports how they ended, with the
 * warnings its client logged meanwhile.
 */
import { RedisTokenStore } from '../../src/redis/index.js';
import type { ClientKind } from '../helpers/redis.js';
import { connectTarget, targetFromEnv } from '../helpers/redis-topologies.js';
import { warningLogger } from '../helpers/warnings.js';
import { burstPayment, serveRequests, settle, workerEnv, workerGateway } from './pool.js';

const { client } = await connectTarget(workerEnv('CLIENT_KIND') as ClientKind, targetFromEnv());
// Warnings (Redis stopped on purpose) go back to the test with each answer, not to the console.
const warnings = warningLogger();
const gateway = workerGateway({
  maxRetries: 0,
  tokenStore: new RedisTokenStore({ client, pollIntervalMs: 10 }),
  logger: warnings.logger,
});
let n = 0;

serveRequests(async (message) => {
  const calls = Array.from({ length: message.calls as number }, () =>
    gateway.payments.create(burstPayment(`W${workerEnv('WORKER')}R${message.round as number}N${++n}`)),
  );
  return { ...(await settle(calls)), warnings: warnings.lines.splice(0) };
});
