/**
 * End to end on 127.0.0.1: the mock gateway completes payments and withdrawals and
 * delivers signed callbacks, with its real retry schedule (shortened), to a real
 * Express app and a real Fastify app that use our middleware.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import express from 'express';
import Fastify from 'fastify';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createMockGateway } from '../../src/testing/index.js';
import {
  WebhookVerifier,
  confirmDeposit,
  createExpressMiddleware,
  createFastifyHandler,
  createWebhookHandler,
  type PaymentStatus,
  type PaymentStatusSource,
  type WebhookEvent,
  type WebhookHandler,
} from '../../src/webhooks/index.js';
import { call, deposit, getToken, withdrawal } from '../helpers/mock-http.js';

const API_KEY = 'sk_test_webhook_e2e_key_7';
const START = Date.parse('2026-03-01T08:00:00.000Z');
let clock = START;
const FAST = { retryDelaysMs: [10, 20] };
const PATH = '/webhooks/myr';

const mock = createMockGateway({
  environment: 'test',
  now: () => clock,
  merchants: [{ merchantId: 'MERCHANT_E2E', apiKey: API_KEY }],
});

/** The merchant's handler, swappable per test. */
let onEvent: (event: WebhookEvent) => unknown = () => {};
const events: WebhookEvent[] = [];
let handler: WebhookHandler;

function freshHandler(): WebhookHandler {
  return createWebhookHandler({
    verifier: new WebhookVerifier({ apiKey: API_KEY, clock: () => clock }),
    onEvent: (event) => {
      events.push(event);
      return onEvent(event);
    },
  });
}

/** Both apps route to whatever `handler` is current, so each test starts with an empty store. */
const received: { body: unknown; headers: Record<string, string | string[] | undefined> }[] = [];
const proxy: WebhookHandler = {
  handle: (request) => {
    received.push(request as (typeof received)[number]);
    return handler.handle(request);
  },
  get verifier() {
    return handler.verifier;
  },
  get store() {
    return handler.store;
  },
};

const apps: Record<string, string> = {};
const closers: (() => Promise<void>)[] = [];

beforeAll(async () => {
  const expressApp = express();
  expressApp.use(express.json());
  expressApp.post(PATH, createExpressMiddleware(proxy));
  const server = createServer(expressApp);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  apps.express = `http://127.0.0.1:${(server.address() as AddressInfo).port}${PATH}`;
  closers.push(() => new Promise<void>((resolve) => server.close(() => resolve())));

  const fastify = Fastify();
  fastify.post(PATH, createFastifyHandler(proxy));
  await fastify.listen({ port: 0, host: '127.0.0.1' });
  apps.fastify = `http://127.0.0.1:${(fastify.server.address() as AddressInfo).port}${PATH}`;
  closers.push(() => fastify.close());

  mock.listen();
});

afterEach(() => {
  mock.reset();
  events.length = 0;
  received.length = 0;
  onEvent = () => {};
  clock = START;
});

afterAll(async () => {
  mock.close();
  await Promise.all(closers.map((close) => close()));
});

/** The status API seen through the mock, shaped like the client's `payments.retrieve`. */
function statusApi(token: string): PaymentStatusSource {
  return {
    payments: {
      async retrieve(id) {
        const answer = await call(mock, 'GET', `/payment/status/${id}`, { token });
        return answer.body.data as PaymentStatus;
      },
    },
  };
}

describe.each(['express', 'fastify'])('mock gateway → %s', (app) => {
  beforeAll(() => {
    handler = freshHandler();
  });
  afterEach(() => {
    handler = freshHandler();
  });

  async function createDeposit(amount = 120.5) {
    const token = await getToken(mock);
    const body = deposit({ amount, callback_url: apps[app] });
    const answer = await call(mock, 'POST', '/payment/request', { token, body });
    expect(answer.status).toBe(200);
    return { token, reference: body.reference_id as string, paymentId: answer.body.data.payment_id as string };
  }

  it('delivers a signed callback that the middleware verifies, and the deposit confirms through the status API', async () => {
    const { token, reference, paymentId } = await createDeposit(250.75);
    clock = START + 3_000;
    const delivery = await mock.completePayment(paymentId, 'SUCCESS', FAST);
    expect(delivery.attempts.map((a) => a.status)).toEqual([200]);
    expect(events).toHaveLength(1);
    const event = events[0] as WebhookEvent;
    expect(event.transaction_type).toBe('DEPOSIT');
    expect(event.signed).toMatchObject({
      payment_id: paymentId,
      reference_id: reference,
      amount: 250.75,
      status: 'SUCCESS',
      webhook_id: delivery.webhookId,
    });
    const confirmation = await confirmDeposit(event, statusApi(token), { amount: 250.75, reference_id: reference });
    expect(confirmation).toMatchObject({ confirmed: true, payment: { status: 'SUCCESS' } });
  });

  it('a handler failing on the first attempt succeeds on the gateway retry', async () => {
    const { paymentId } = await createDeposit();
    let calls = 0;
    onEvent = () => {
      calls++;
      if (calls === 1) throw new Error('warehouse system down');
    };
    const delivery = await mock.completePayment(paymentId, 'SUCCESS', FAST);
    expect(delivery.attempts.map((a) => a.status)).toEqual([500, 200]);
    expect(delivery.delivered).toBe(true);
    expect(calls).toBe(2);
  });

  it('acknowledges a duplicate delivery without running the handler a second time', async () => {
    const { paymentId } = await createDeposit();
    const delivery = await mock.completePayment(paymentId, 'SUCCESS', { ...FAST, duplicate: true });
    expect(delivery.attempts.map((a) => [a.status, a.duplicate ?? false])).toEqual([
      [200, false],
      [200, true],
    ]);
    expect(events).toHaveLength(1);
  });

  it('runs the handler once when the same callback arrives many times at once', async () => {
    const { paymentId } = await createDeposit();
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    onEvent = () => gate;
    // The gateway's delivery is held inside the merchant's handler...
    const delivering = mock.completePayment(paymentId, 'SUCCESS', FAST);
    while (events.length === 0) await new Promise((r) => setTimeout(r, 2));
    const seen = received[0] as { body: unknown; headers: Record<string, string | string[] | undefined> };
    const headers: Record<string, string> = {};
    for (const name of ['content-type', 'x-webhook-signature', 'x-webhook-id', 'x-webhook-timestamp', 'x-payment-id']) {
      headers[name] = seen.headers[name] as string;
    }
    const replay = () =>
      Promise.all(
        Array.from({ length: 10 }, () =>
          fetch(apps[app] as string, { method: 'POST', headers, body: JSON.stringify(seen.body) }),
        ),
      );
    // ...while the same signed callback arrives 10 more times at once: none is acknowledged as done.
    const during = await replay();
    expect(during.map((r) => r.status)).toEqual(Array(10).fill(409));
    release();
    const delivery = await delivering;
    expect(delivery.attempts.map((a) => a.status)).toEqual([200]);
    // Once finished, every further copy is acknowledged without running the handler.
    const after = await replay();
    expect(after.map((r) => r.status)).toEqual(Array(10).fill(200));
    expect(events).toHaveLength(1);
  });

  it('rejects a tampered callback on every attempt (401) and a stale one (400), never running the handler', async () => {
    const first = await createDeposit();
    const tampered = await mock.completePayment(first.paymentId, 'SUCCESS', {
      ...FAST,
      tamper: (b) => ({ ...b, amount: 999_999 }),
    });
    expect(tampered.attempts.map((a) => a.status)).toEqual([401, 401, 401]);
    expect(tampered.delivered).toBe(false);
    const second = await createDeposit();
    const stale = await mock.completePayment(second.paymentId, 'SUCCESS', { ...FAST, timestampOffsetMs: -10 * 60_000 });
    expect(stale.attempts.map((a) => a.status)).toEqual([400, 400, 400]);
    expect(events).toHaveLength(0);
  });

  it('delivers a withdrawal callback with its unsigned bank fields', async () => {
    const token = await getToken(mock);
    const body = withdrawal();
    const answer = await call(mock, 'POST', '/payment/withdraw', { token, body });
    expect(answer.status).toBe(200);
    const delivery = await mock.completeWithdrawal(answer.body.data.payment_id as string, 'SUCCESS', {
      ...FAST,
      callbackUrl: apps[app] as string,
    });
    expect(delivery.attempts.map((a) => a.status)).toEqual([200]);
    const event = events[0] as WebhookEvent;
    expect(event.transaction_type).toBe('WITHDRAWAL');
    if (event.transaction_type !== 'WITHDRAWAL') return;
    expect(event.unsigned.bank_code).toBe('PBBEMYKL');
    expect(event.unsigned.account_number).toMatch(/^\*+6789$/);
  });
});
