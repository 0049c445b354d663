/**
 * One instance behind the load balancer: a webhook handler on a RedisWebhookStore.
 * `{ type: 'deliver', body, headers, fail }` hands it one delivery; the answer says
 * what the handler answered and whether `onEvent` ran here; `{ type: 'ran' }` lists the payment
 * ids whose handler ran in this process; `{ type: 'reports' }` what its `onError` was told.
 */
import { RedisWebhookStore } from '../../src/redis/index.js';
import { createWebhookHandler } from '../../src/webhooks/index.js';
import type { ClientKind } from '../helpers/redis.js';
import { connectTarget, targetFromEnv } from '../helpers/redis-topologies.js';
import { serveRequests, workerEnv } from './pool.js';

const { client } = await connectTarget(workerEnv('CLIENT_KIND') as ClientKind, targetFromEnv());
const store = new RedisWebhookStore({ client, timeoutMs: 300 });
let failing = false;
let holdMs = 0;
let runs = 0;
let started: (() => void) | undefined;
const ran: string[] = []; // payment ids whose handler ran here, in order
const reports: string[] = []; // what the handler reported through onError, in order
const handler = createWebhookHandler({
  verifier: { apiKey: workerEnv('API_KEY') },
  store,
  onError: (error) =>
    void reports.push(
      `${error.code}: ${error.message}${error.cause instanceof Error ? ` (${error.cause.message})` : ''}`,
    ),
  // The default unless a test picks the in-window recovery (4 s) or another claim TTL.
  inFlightTtlMs: process.env.IN_FLIGHT_TTL_MS === undefined ? undefined : Number(process.env.IN_FLIGHT_TTL_MS),
  onEvent: async (event) => {
    runs += 1;
    ran.push(event.signed.payment_id);
    started?.();
    // Fulfilment takes a moment (the others arrive meanwhile), or `holdMs` for a slow one.
    await new Promise((r) => setTimeout(r, holdMs || 20));
    if (failing) throw new Error('fulfilment failed');
  },
});

serveRequests(async (message) => {
  if (message.type === 'ran') return ran;
  if (message.type === 'reports') return reports;
  if (message.type === 'redis-ready') {
    // After an outage: wait until this process's client is back (bounded).
    for (let i = 0; i < 200; i++) {
      if (
        await store.claim(`probe:${process.pid}:${i}`, 1).then(
          () => true,
          () => false,
        )
      )
        return true;
      await new Promise((r) => setTimeout(r, 25));
    }
    throw new Error('Redis did not come back');
  }
  failing = message.fail === true;
  holdMs = typeof message.holdMs === 'number' ? message.holdMs : 0;
  if (message.type === 'start') {
    // Starts the handler and answers once onEvent runs, without waiting for it (to crash it).
    const running = new Promise<void>((resolve) => (started = resolve));
    // The parent test sends the signed headers; the promise is let go on purpose (see above).
    void handler.handle({ body: message.body, headers: message.headers as Record<string, string> });
    await running;
    return { started: true };
  }
  const before = runs;
  const response = await handler.handle({ body: message.body, headers: message.headers as Record<string, string> }); // the parent sends signed headers
  return { status: response.status, outcome: response.body.outcome, ran: runs - before };
});
