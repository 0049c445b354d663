/**
 * One merchant process: a MyrGateway whose tokens live in Redis. On `{ type: 'run', calls }`
 * it makes that many concurrent payment creations and reports how they ended.
 */
import { MyrGateway } from '../../src/index.js';
import { RedisTokenStore } from '../../src/redis/index.js';
import { connect, type ClientKind } from '../helpers/redis.js';
import { serveRequests, workerEnv } from './pool.js';

const { client } = await connect(workerEnv('CLIENT_KIND') as ClientKind, workerEnv('REDIS_URL'));
const gateway = new MyrGateway({
  baseUrl: workerEnv('BASE_URL'),
  merchantId: workerEnv('MERCHANT_ID'),
  apiKey: workerEnv('API_KEY'),
  allowInsecureLoopback: true,
  maxRetries: 0,
  tokenStore: new RedisTokenStore({ client, pollIntervalMs: 10 }),
});
let n = 0;

serveRequests(async (message) => {
  const calls = Array.from({ length: message.calls as number }, () =>
    gateway.payments.create({
      amount: 10,
      reference_id: `W${workerEnv('WORKER')}R${message.round as number}N${++n}`,
      customer_name: 'Aisyah Rahman',
      customer_phone: '60123456789',
      payment_method: 'QR_PAYMENT',
    }),
  );
  const settled = await Promise.allSettled(calls);
  const errors = settled.flatMap((s) => (s.status === 'rejected' ? [String((s.reason as Error).message)] : []));
  return { ok: settled.length - errors.length, errors: errors.slice(0, 3) };
});
