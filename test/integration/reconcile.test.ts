/**
 * examples/reconcile.ts: payments whose callback never came are fulfilled by the job through
 * the same fulfilment code and the same store as the webhook handler, exactly once, including
 * when a callback arrives while the job runs (and the other way round).
 */
import { afterEach, describe, expect, it } from 'vitest';
import { MemoryRateLimiter, MemoryTokenStore, MyrGateway } from '../../src/index.js';
import { createMockGateway, type MockGateway } from '../../src/testing/index.js';
import { createWebhookHandler, type WebhookHandler } from '../../src/webhooks/index.js';
import { reconcilePayments, type PaymentOutcome } from '../../examples/reconcile.js';
import { paymentParams } from '../helpers/client.js';

function gate() {
  let open!: () => void;
  const opened = new Promise<void>((resolve) => (open = resolve));
  return { open, opened };
}

/** A mock whose callbacks go straight into the handler; every answer status is recorded. */
function setup(onFulfil: (p: PaymentOutcome) => Promise<void> = async () => {}, holdCallback?: Promise<void>) {
  const fulfilments: string[] = [];
  const answers: number[] = [];
  const fulfil = async (p: PaymentOutcome) => {
    await onFulfil(p);
    fulfilments.push(`${p.reference_id}:${p.status}`);
  };
  const apiKey = 'sk_test_recon_0001';
  const handler: WebhookHandler = createWebhookHandler({
    verifier: { apiKey },
    onEvent: (event) => fulfil(event.signed),
  });
  const mock: MockGateway = createMockGateway({
    environment: 'test',
    merchants: [{ merchantId: 'M_RECON', apiKey, defaultCallbackUrl: 'https://merchant.test/cb' }],
    callbackFetch: async (_url, init) => {
      await holdCallback;
      const response = await handler.handle({
        body: typeof init?.body === 'string' ? init.body : '',
        headers: init?.headers as Record<string, string>,
      });
      answers.push(response.status);
      return new Response(JSON.stringify(response.body), { status: response.status });
    },
  });
  mock.listen();
  const gateway = new MyrGateway({
    baseUrl: mock.baseUrl,
    ...mock.merchant,
    tokenStore: new MemoryTokenStore(),
    rateLimiter: new MemoryRateLimiter(),
  });
  const run = (unconfirmed: string[]) => reconcilePayments({ gateway, store: handler.store, unconfirmed, fulfil });
  return { mock, gateway, handler, fulfilments, answers, run };
}

let current: MockGateway | undefined;
afterEach(() => current?.close());

describe('the reconciliation job', () => {
  it('fulfils a payment whose callback was lost, once; the next run and a late callback do not fulfil again', async () => {
    const t = setup();
    current = t.mock;
    const p = await t.gateway.payments.create(paymentParams());
    await t.mock.completePayment(p.payment_id, 'SUCCESS', { deliver: false });

    expect(await t.run([p.reference_id])).toMatchObject({ fulfilled: [p.reference_id], alreadyHandled: [] });
    expect(await t.run([p.reference_id])).toMatchObject({ fulfilled: [], alreadyHandled: [p.reference_id] });
    // The gateway's callback arrives after all: acknowledged as a duplicate, not handled.
    await t.mock.completePayment(p.payment_id, 'SUCCESS', { retryDelaysMs: [] }).catch(() => undefined);
    expect(t.fulfilments).toEqual([`${p.reference_id}:SUCCESS`]);
  });

  it('leaves a payment the callback already handled, and one still PROCESSING, alone', async () => {
    const t = setup();
    current = t.mock;
    const done = await t.gateway.payments.create(paymentParams());
    const open = await t.gateway.payments.create(paymentParams());
    await t.mock.completePayment(done.payment_id, 'SUCCESS', { retryDelaysMs: [] });
    expect(t.answers).toEqual([200]);
    const report = await t.run([done.reference_id, open.reference_id, 'NOSUCHORDER']);
    expect(report).toEqual({
      fulfilled: [],
      alreadyHandled: [done.reference_id],
      later: [open.reference_id],
      failed: ['NOSUCHORDER'],
    });
    expect(t.fulfilments).toEqual([`${done.reference_id}:SUCCESS`]);
  });

  it('a callback arriving while the job fulfils is answered 409, then 200 duplicate: fulfilled once', async () => {
    const jobInside = gate();
    const finishJob = gate();
    const t = setup(async () => {
      jobInside.open();
      await finishJob.opened;
    });
    current = t.mock;
    const p = await t.gateway.payments.create(paymentParams());
    await t.mock.completePayment(p.payment_id, 'SUCCESS', { deliver: false });
    const job = t.run([p.reference_id]);
    await jobInside.opened;
    // Now the callback: a first delivery while the job holds the key, a retry after it finished.
    const delivery = t.mock.completePayment(p.payment_id, 'SUCCESS', { retryDelaysMs: [50] }).catch(() => undefined);
    await expect.poll(() => t.answers).toEqual([409]);
    finishJob.open();
    expect(await job).toMatchObject({ fulfilled: [p.reference_id] });
    await delivery;
    expect(t.answers).toEqual([409, 200]);
    expect(t.fulfilments).toEqual([`${p.reference_id}:SUCCESS`]);
  });

  it('a job run meeting a callback in flight skips the payment; the next run finds it handled', async () => {
    const callbackInside = gate();
    const finishCallback = gate();
    let calls = 0;
    const t = setup(async () => {
      if (++calls > 1) return;
      callbackInside.open();
      await finishCallback.opened;
    });
    current = t.mock;
    const p = await t.gateway.payments.create(paymentParams());
    const delivery = t.mock.completePayment(p.payment_id, 'SUCCESS', { retryDelaysMs: [] });
    await callbackInside.opened;
    expect(await t.run([p.reference_id])).toMatchObject({ fulfilled: [], later: [p.reference_id] });
    finishCallback.open();
    await delivery;
    expect(await t.run([p.reference_id])).toMatchObject({ alreadyHandled: [p.reference_id] });
    expect(t.answers).toEqual([200]);
    expect(t.fulfilments).toEqual([`${p.reference_id}:SUCCESS`]);
  });

  it('a fulfilment that throws is reported failed and released: the next run fulfils it', async () => {
    let fail = true;
    const t = setup(async () => {
      if (fail) throw new Error('warehouse down');
    });
    current = t.mock;
    const p = await t.gateway.payments.create(paymentParams());
    await t.mock.completePayment(p.payment_id, 'SUCCESS', { deliver: false });
    expect(await t.run([p.reference_id])).toMatchObject({ failed: [p.reference_id] });
    fail = false;
    expect(await t.run([p.reference_id])).toMatchObject({ fulfilled: [p.reference_id] });
    expect(t.fulfilments).toEqual([`${p.reference_id}:SUCCESS`]);
  });
});
