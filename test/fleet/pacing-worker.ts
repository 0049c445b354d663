/**
 * One merchant process pacing through a RedisRateLimiter. On `{ type: 'burst', calls }` it
 * makes that many concurrent payment creations and reports how they ended.
 */
import { MyrGateway } from '../../src/index.js';
import { RedisRateLimiter, RedisTokenStore } from '../../src/redis/index.js';
import { connect, type ClientKind } from '../helpers/redis.js';
import { serveRequests, workerEnv } from './pool.js';

const { client } = await connect(workerEnv('CLIENT_KIND') as ClientKind, workerEnv('REDIS_URL'));
const gateway = new MyrGateway({
  baseUrl: workerEnv('BASE_URL'),
  merchantId: workerEnv('MERCHANT_ID'),
  apiKey: workerEnv('API_KEY'),
  allowInsecureLoopback: true,
  tokenStore: new RedisTokenStore({ client, pollIntervalMs: 10 }),
  rateLimiter: new RedisRateLimiter({ client }),
});
let n = 0;

serveRequests(async (message) => {
  const calls = Array.from({ length: message.calls as number }, () =>
    gateway.payments.create({
      amount: 10,
      reference_id: `P${workerEnv('WORKER')}N${++n}`,
      customer_name: 'Aisyah Rahman',
      customer_phone: '60123456789',
      payment_method: 'QR_PAYMENT',
    }),
  );
  const settled = await Promise.allSettled(calls);
  const errors = settled.flatMap((s) => (s.status === 'rejected' ? [String((s.reason as Error).message)] : []));
  return { ok: settled.length - errors.length, errors: errors.slice(0, 3) };
});
