/**
 * The mock never reads `globalThis.fetch` when its module loads: a fetch installed after the
 * import (instrumentation, a polyfill, a runtime that sets it up late) is the one that
 * delivers callbacks. The callback URL is never served: the installed fetch answers itself.
 */
import { afterEach, expect, it } from 'vitest';
import { MemoryTokenStore, MyrGateway } from '../../../src/index.js';
import { createMockGateway } from '../../../src/testing/index.js';

const original = globalThis.fetch;
afterEach(() => {
  globalThis.fetch = original;
});

it('delivers callbacks with the fetch that is global when the mock is created, not when its module loaded', async () => {
  const seen: string[] = [];
  globalThis.fetch = async (input) => {
    seen.push(String(input instanceof Request ? input.url : input));
    return new Response('ok', { status: 200 });
  };
  const mock = createMockGateway({
    environment: 'test',
    merchants: [{ merchantId: 'M_FETCH', apiKey: 'sk_fetch', defaultCallbackUrl: 'http://merchant.invalid/cb' }],
  });
  const served = await mock.serve(); // real HTTP; the client reaches it with the real fetch
  try {
    const client = new MyrGateway({
      baseUrl: served.baseUrl,
      merchantId: 'M_FETCH',
      apiKey: 'sk_fetch',
      allowInsecureLoopback: true,
      fetch: original,
      tokenStore: new MemoryTokenStore(),
    });
    const created = await client.payments.create({
      amount: 10,
      reference_id: 'FETCH1',
      customer_name: 'A',
      customer_phone: '60123',
      payment_method: 'QR_PAYMENT',
    });
    const delivery = await mock.completePayment(created.payment_id, 'SUCCESS', { retryDelaysMs: [] });
    expect(delivery.attempts[0]?.status).toBe(200);
  } finally {
    await served.close();
  }
  expect(seen).toEqual(['http://merchant.invalid/cb']);
});
