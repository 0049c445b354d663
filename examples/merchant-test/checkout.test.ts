/**
 * A merchant's own vitest test with `myr-gateway/testing`: the mock answers the client like
 * the service (msw, no network), and delivers signed callbacks to a real webhook server on
 * 127.0.0.1. `npm install -D vitest msw` in your project; this file runs in ours.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, afterEach, beforeAll, beforeEach, expect, it } from 'vitest';
import { MemoryTokenStore, MyrGateway, RateLimitError } from 'myr-gateway';
import { createMockGateway, type MockGateway } from 'myr-gateway/testing';
import { createNodeHandler } from 'myr-gateway/webhooks';
import { checkout, paidOrders } from './checkout.js';

const apiKey = 'sk_test_shop1';
let webhookServer: Server;
let mock: MockGateway;
let gateway: MyrGateway;

beforeAll(async () => {
  const handle = createNodeHandler({
    verifier: { apiKey },
    onEvent: (event) => {
      if (event.signed.status === 'SUCCESS') paidOrders.add(event.signed.reference_id);
    },
  });
  webhookServer = createServer(handle);
  await new Promise<void>((resolve) => webhookServer.listen(0, '127.0.0.1', resolve));
  const { port } = webhookServer.address() as AddressInfo;
  // The client accepts only an https:// callback_url in a request, so a local receiver is
  // the mock merchant's default callback URL (the mock's own setting may be http on 127.0.0.1).
  mock = createMockGateway({
    merchants: [{ merchantId: 'SHOP1', apiKey, defaultCallbackUrl: `http://127.0.0.1:${port}/webhooks/myr` }],
  });
  mock.listen();
});
beforeEach(() => {
  // A client with a token cache of its own per test, so each test's requests (its token
  // request included) are its own. Short retry waits keep the test fast.
  gateway = new MyrGateway({
    baseUrl: mock.baseUrl,
    ...mock.merchant,
    tokenStore: new MemoryTokenStore(),
    retry: { baseDelayMs: 1, jitterMs: 0 },
  });
});
afterEach(() => {
  mock.reset();
  paidOrders.clear();
});
afterAll(async () => {
  mock.close();
  await new Promise((resolve) => webhookServer.close(resolve));
});

it('sends the customer to the QR page and marks the order paid from the signed callback', async () => {
  const url = await checkout(gateway, 'ORDER1001', '120.50');
  const payment = mock.getPayment('ORDER1001');
  expect(url).toBe(payment?.payment_url);
  expect(payment?.amount).toBe(120.5);

  const delivery = await mock.completePayment('ORDER1001', 'SUCCESS', { retryDelaysMs: [10, 20] });
  expect(delivery.attempts.map((a) => a.status)).toEqual([200]);
  expect(paidOrders.has('ORDER1001')).toBe(true);
});

it('ignores a forged callback', async () => {
  await checkout(gateway, 'ORDER1002', '15');
  const delivery = await mock.completePayment('ORDER1002', 'SUCCESS', {
    tamper: (body) => ({ ...body, amount: 0.01 }),
    retryDelaysMs: [],
  });
  expect(delivery.attempts.map((a) => a.status)).toEqual([401]);
  expect(paidOrders.has('ORDER1002')).toBe(false);
});

it('survives a rate limit: the SDK waits and retries, the payment is created once', async () => {
  mock.fault({ endpoint: 'payment.create', response: { type: 'rateLimit', retryAfter: 0 } });
  await checkout(gateway, 'ORDER1003', '99.90');
  expect(mock.requests.filter((r) => r.endpoint === 'payment.create').map((r) => r.status)).toEqual([429, 200]);
  expect(mock.payments).toHaveLength(1);
});

it('reports a rate limit that outlasts the retries as a RateLimitError', async () => {
  mock.fault({ endpoint: 'payment.create', times: Infinity, response: { type: 'rateLimit', retryAfter: 0 } });
  await expect(checkout(gateway, 'ORDER1004', '10')).rejects.toBeInstanceOf(RateLimitError);
  expect(mock.payments).toHaveLength(0);
});
