/**
 * The mock served over HTTPS from a process of its own (issue 33): a rate limit of `LIMIT`
 * payment creations per `WINDOW_MS`, each counted `COUNT_LATENCY_MS` plus up to
 * `COUNT_JITTER_MS` after it arrives (0 and 0: on arrival). Ten more merchants, `MERCHANT_ID_0`
 * to `_9`, share the key. Answers `{ type: 'creates' }` with
 * the creations' statuses in arrival order, `{ type: 'timeline' }` with their statuses and arrival
 * times (ms, this machine's clock), and `{ type: 'reset' }` by forgetting them and the window.
 */
import { readFileSync } from 'node:fs';
import { createMockGateway } from '../../src/testing/index.js';
import { serveRequests, workerEnv } from '../fleet/pool.js';

const latencyMs = Number(workerEnv('COUNT_LATENCY_MS'));
const jitterMs = Number(workerEnv('COUNT_JITTER_MS'));
const mock = createMockGateway({
  baseUrl: 'https://127.0.0.1/api/v1',
  // MERCHANT_ID, and MERCHANT_ID_0 … _9 with the same key: a cold budget each, for repeated cold bursts.
  merchants: ['', ...Array.from({ length: 10 }, (_, i) => `_${i}`)].map((suffix) => ({
    merchantId: `${workerEnv('MERCHANT_ID')}${suffix}`,
    apiKey: workerEnv('API_KEY'),
  })),
  rateLimits: { paymentRequest: Number(workerEnv('LIMIT')) },
  rateLimitWindowMs: Number(workerEnv('WINDOW_MS')),
  ...(latencyMs + jitterMs > 0 ? { rateLimitCountDelay: { latencyMs, jitterMs } } : {}),
});
const server = await mock.serve({
  tls: { key: readFileSync(workerEnv('TLS_KEY')), cert: readFileSync(workerEnv('TLS_CERT')) },
});

serveRequests(async (message) => {
  if (message.type === 'url') return server.baseUrl;
  if (message.type === 'reset') return void mock.reset();
  const creates = mock.requests.filter((r) => r.endpoint === 'payment.create');
  if (message.type === 'timeline') return creates.map(({ status, at }) => ({ status, at }));
  return creates.map((r) => r.status);
});
