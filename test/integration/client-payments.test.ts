import { readFileSync } from 'node:fs';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { VERSION } from '../../src/index.js';
import { createMockGateway } from '../../src/testing/index.js';
import { clientFor, paymentParams } from '../helpers/client.js';

const mock = createMockGateway();
beforeAll(() => mock.listen());
afterEach(() => mock.reset());
afterAll(() => mock.close());

describe('payments', () => {
  it.each([
    ['QR_PAYMENT', 'payment_url'],
    ['BANK_TRANSFER', 'gateway.redirect_url'],
    ['MOBILE_WALLET', 'gateway.redirect_url'],
  ] as const)('%s sends the customer to %s', async (method, field) => {
    const { gateway } = clientFor(mock);
    const payment = await gateway.payments.create(paymentParams(method));
    const expected = field === 'payment_url' ? payment.payment_url : payment.gateway.redirect_url;
    expect(payment.customer_redirect_url).toBe(expected);
    expect(payment.payment_url).not.toBe(payment.gateway.redirect_url);
    expect(payment.gateway.behavior).toBe('REDIRECT_EXTERNAL');
    expect(payment.status).toBe('PROCESSING');
    expect(payment.payment_id).toMatch(/^PAY_/);
    expect(payment.expires_in).toBeGreaterThan(0);
  });

  it('sends the request body with the API wire names and the bearer token', async () => {
    const { gateway } = clientFor(mock);
    const params = {
      ...paymentParams('BANK_TRANSFER', 19.99),
      callback_url: 'https://merchant.example/cb',
      metadata: { provider_channel_id: 'PBB0233' as const, cart: 'C1' },
    };
    await gateway.payments.create(params);
    const sent = mock.requests.find((r) => r.endpoint === 'payment.create');
    expect(sent?.body).toEqual(params);
    expect(sent?.headers['content-type']).toContain('application/json');
    expect(sent?.headers['user-agent']).toBe(`myr-gateway/${VERSION}`);
  });

  it('retrieves by payment_id and by reference_id', async () => {
    const { gateway } = clientFor(mock);
    const payment = await gateway.payments.create(paymentParams());
    const byId = await gateway.payments.retrieve(payment.payment_id);
    const byRef = await gateway.payments.retrieve(payment.reference_id);
    expect(byId).toEqual(byRef);
    expect(byId).toMatchObject({
      payment_id: payment.payment_id,
      reference_id: payment.reference_id,
      amount: 120.5,
      currency: 'MYR',
      status: 'PROCESSING',
      completed_at: null,
    });
    expect(mock.requests.filter((r) => r.endpoint === 'payment.status').map((r) => r.path)).toEqual([
      `/payment/status/${payment.payment_id}`,
      `/payment/status/${payment.reference_id}`,
    ]);
  });

  it('sees a terminal status after the gateway completes the payment', async () => {
    const { gateway } = clientFor(mock);
    const payment = await gateway.payments.create(paymentParams());
    await mock.completePayment(payment.payment_id, 'SUCCESS', { deliver: false });
    const status = await gateway.payments.retrieve(payment.reference_id);
    expect(status.status).toBe('SUCCESS');
    expect(status.completed_at).toEqual(expect.any(String));
    expect(status.gateway_reference).toEqual(expect.any(String));
  });

  it('exposes the last X-RateLimit-* headers it saw', async () => {
    const { gateway } = clientFor(mock);
    expect(gateway.rateLimit).toBeUndefined();
    await gateway.payments.create(paymentParams());
    const first = gateway.rateLimit;
    expect(first?.limit).toBe(100);
    expect(first?.remaining).toBe(99);
    expect(first?.reset).toBeGreaterThan(Date.now() / 1000 - 1);
    await gateway.payments.create(paymentParams());
    expect(gateway.rateLimit?.remaining).toBe(98);
  });

  it('VERSION matches package.json', () => {
    const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string };
    expect(VERSION).toBe(pkg.version);
  });
});
