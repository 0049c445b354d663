/**
 * One merchant process for the slow token endpoint fleet test: on `{ type: 'run', calls, timeout }`
 * it builds a client (tokens in Redis) with that per-attempt timeout and makes that many
 * concurrent payment creations on a cold cache, reporting how they ended and the client's warnings.
 */
import { RedisTokenStore } from '../../src/redis/index.js';
import type { ClientKind } from '../helpers/redis.js';
import { connectTarget, targetFromEnv } from '../helpers/redis-topologies.js';
import { burstPayment, serveRequests, settle, workerEnv, workerGateway } from './pool.js';

const { client } = await connectTarget(workerEnv('CLIENT_KIND') as ClientKind, targetFromEnv());
let n = 0;

serveRequests(async (message) => {
  const warnings: string[] = [];
  const logger = {
    debug: () => undefined,
    info: () => undefined,
    warn: (m: string) => void warnings.push(m),
    error: () => undefined,
  };
  const gateway = workerGateway({
    logger,
    timeout: message.timeout as number,
    retry: { jitterMs: 0 },
    tokenStore: new RedisTokenStore({ client, pollIntervalMs: 20 }),
  });
  const result = await settle(
    Array.from({ length: message.calls as number }, () =>
      gateway.payments.create(burstPayment(`S${workerEnv('WORKER')}R${message.round as number}N${++n}`)),
    ),
  );
  return { ...result, warnings };
});
