/**
 * One merchant process pacing through a RedisRateLimiter. On `{ type: 'burst', calls }` it
 * makes that many concurrent payment creations and reports how they ended; `merchantId` (the
 * bench) picks another merchant, a budget of its own and cold in Redis; `{ type: 'token' }`
 * fetches that merchant's token. `TRUST_CERT`: a certificate file to trust for HTTPS. A burst's
 * result also carries the warnings its client and limiter gave since the last one (a fall back to
 * pacing in this process only, say), so a test can hold them to none.
 */
import type { MyrGateway } from '../../src/index.js';
import { RedisRateLimiter, RedisTokenStore } from '../../src/redis/index.js';
import type { ClientKind } from '../helpers/redis.js';
import { connectTarget, targetFromEnv } from '../helpers/redis-topologies.js';
import { trustCertificate } from '../helpers/rate-mock-process.js';
import { burstPayment, serveRequests, settle, workerEnv, workerGateway } from './pool.js';

// A service over HTTPS with a certificate made for the run (test/helpers/rate-mock-process.ts).
if (process.env.TRUST_CERT) trustCertificate(process.env.TRUST_CERT);

const { client } = await connectTarget(workerEnv('CLIENT_KIND') as ClientKind, targetFromEnv());
/** What a burst answers: the creations made, the first errors, the warnings given since the last burst. */
export type PacingBurst = { ok: number; errors: string[]; warnings: string[] };

/** The client's and limiter's warnings since the last burst reported them. */
const warnings: string[] = [];
const capture = (message: unknown) => void warnings.push(String(message));
const logger = { debug: () => undefined, info: () => undefined, warn: capture, error: capture };
const gateways = new Map<string, MyrGateway>();
function gatewayOf(merchantId: string): MyrGateway {
  let gateway = gateways.get(merchantId);
  if (!gateway) {
    gateway = workerGateway({
      merchantId,
      logger,
      tokenStore: new RedisTokenStore({ client, pollIntervalMs: 10 }),
      // A loaded CI machine can take longer than the default 1 s per command, or than a call's
      // default 1 s on the stores in all; falling back to in-process pacing (the fail-open path,
      // tested in redis-rate-limiter.test.ts) is not what this tests.
      tokenStoreTimeout: 10_000,
      rateLimiter: new RedisRateLimiter({ client, timeoutMs: 10_000, logger }),
    });
    gateways.set(merchantId, gateway);
  }
  return gateway;
}
let n = 0;

serveRequests((message) => {
  const gateway = gatewayOf(typeof message.merchantId === 'string' ? message.merchantId : workerEnv('MERCHANT_ID'));
  // `{ type: 'token' }`: fetch a token (through a status query, whatever its answer) so that a burst measured next starts with one.
  if (message.type === 'token')
    return gateway.payments.retrieve('PAYWARMUP').then(
      () => true,
      () => true,
    );
  return settle(
    Array.from({ length: message.calls as number }, () =>
      gateway.payments.create(burstPayment(`P${workerEnv('WORKER')}N${++n}`)),
    ),
  ).then((result): PacingBurst => ({ ...result, warnings: warnings.splice(0) }));
});
