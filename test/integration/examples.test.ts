// Every example in examples/ runs here, the way a merchant would use it, so none can rot:
// each webhook receiver gets a genuine callback (real HTTP where the framework listens), a
// duplicate and a forgery; each payment method, the error handling and the fleet set-up run
// against the mock.
import { once } from 'node:events';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { serve } from '@hono/node-server';
import { Redis } from 'ioredis';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { MemoryRateLimiter, MyrGateway } from '../../src/index.js';
import { createMockGateway, signCallback } from '../../src/testing/index.js';
import { hasRedisServer, RedisServer } from '../helpers/redis.js';

const mock = createMockGateway();
const settings = {
  MYR_GATEWAY_BASE_URL: mock.baseUrl,
  MYR_GATEWAY_MERCHANT_ID: mock.merchant.merchantId,
  MYR_GATEWAY_API_KEY: mock.merchant.apiKey,
};
Object.assign(process.env, settings);
const shop = await import('../../examples/shop.js');
const gateway = new MyrGateway({ baseUrl: mock.baseUrl, ...mock.merchant });
const customer = { customer_name: 'Aisyah Rahman', customer_phone: '60123456789' };
let sequence = 0;

beforeAll(() => mock.listen());
afterEach(() => mock.reset());
afterAll(() => mock.close());

/** A QR payment for a new order of `shop`, paid in the mock (no callback sent yet). */
async function paidOrder(total = 42.5): Promise<{ referenceId: string; paymentId: string }> {
  const referenceId = `EXAMPLE${Date.now()}${(sequence += 1)}`;
  shop.orders.add(referenceId, total);
  const payment = await gateway.payments.create({
    ...customer,
    amount: total,
    reference_id: referenceId,
    payment_method: 'QR_PAYMENT',
  });
  return { referenceId, paymentId: payment.payment_id };
}

/** Delivers the real callback (then the same delivery again) to a listening receiver, and a forgery. */
async function exerciseOverHttp(url: string): Promise<void> {
  const { referenceId, paymentId } = await paidOrder();
  const lookups = mock.count('payment.status');
  const delivery = await mock.completePayment(paymentId, 'SUCCESS', {
    callbackUrl: url,
    duplicate: true,
    retryDelaysMs: [],
  });
  expect(delivery.attempts.map((a) => a.status)).toEqual([200, 200]);
  expect(shop.orders.get(referenceId)?.paid).toBe(true);
  expect(mock.count('payment.status') - lookups).toBe(1); // confirmed once: the duplicate did not run the handler

  const other = await paidOrder();
  const forged = await mock.completePayment(other.paymentId, 'SUCCESS', {
    callbackUrl: url,
    tamper: (body) => ({ ...body, amount: 0.01 }),
    retryDelaysMs: [],
  });
  expect(forged.attempts.map((a) => a.status)).toEqual([401]);
  expect(shop.orders.get(other.referenceId)?.paid).toBe(false);
}

/** A genuine signed callback as a Web Request (for receivers that take a Request). */
async function callbackRequest(forge = false): Promise<{ request: Request; referenceId: string }> {
  const { referenceId, paymentId } = await paidOrder();
  await mock.completePayment(paymentId, 'SUCCESS', { deliver: false });
  const record = mock.getPayment(paymentId);
  const signed = await signCallback(forge ? 'sk_someone_else' : mock.merchant.apiKey, {
    payment_id: paymentId,
    reference_id: referenceId,
    amount: 42.5,
    status: 'SUCCESS',
    completed_at: record?.completed_at ?? null,
  });
  return {
    referenceId,
    request: new Request('https://shop.example/webhooks/myr', {
      method: 'POST',
      headers: signed.headers,
      body: signed.rawBody,
    }),
  };
}

async function listening(server: Server): Promise<string> {
  if (!server.listening) await once(server, 'listening');
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}/webhooks/myr`;
}

/** Runs {@link exerciseOverHttp} against a receiver listening on `server`, then closes it. */
async function exerciseServer(server: Server): Promise<void> {
  try {
    await exerciseOverHttp(await listening(server));
  } finally {
    server.close();
  }
}

describe('webhook receivers (examples/webhooks)', () => {
  it('Express: verifies, fulfils once, acknowledges a duplicate, refuses a forgery', async () => {
    const { app } = await import('../../examples/webhooks/express.js');
    await exerciseServer(app.listen(0, '127.0.0.1'));
  });

  it('Koa: the same over a real socket', async () => {
    const { app } = await import('../../examples/webhooks/koa.js');
    await exerciseServer(app.listen(0, '127.0.0.1'));
  });

  it('Hono on Node (@hono/node-server): the same over a real socket', async () => {
    const { app } = await import('../../examples/webhooks/hono-node.js');
    await exerciseServer(serve({ fetch: app.fetch, port: 0, hostname: '127.0.0.1' }) as Server);
  });

  it('Fastify plugin: the same, through Fastify with its own JSON parser elsewhere', async () => {
    const { app } = await import('../../examples/webhooks/fastify.js');
    await app.listen({ port: 0, host: '127.0.0.1' });
    try {
      await exerciseOverHttp(await listening(app.server));
    } finally {
      await app.close();
    }
  });

  it('Hono Worker module: its exported fetch takes a Request and the bindings', async () => {
    const worker = (await import('../../examples/webhooks/hono-worker.js')).default;
    const { request, referenceId } = await callbackRequest();
    const response = await worker.fetch(request, settings);
    expect(response.status).toBe(200);
    expect(shop.orders.get(referenceId)?.paid).toBe(true);
    const forged = await callbackRequest(true);
    expect((await worker.fetch(forged.request, settings)).status).toBe(401);
    expect(shop.orders.get(forged.referenceId)?.paid).toBe(false);
  });

  it('Next.js route handler: imports with no settings, fails a request loudly without them, handles one with them', async () => {
    const saved = { ...process.env };
    for (const name of Object.keys(settings)) delete process.env[name];
    const calls: string[] = [];
    Object.assign(globalThis, {
      orders: {
        get: async (referenceId: string) => ({ id: referenceId, total: '42.50' }),
        markPaid: async (id: string) => void calls.push(`paid ${id}`),
        markPayout: async (referenceId: string, status: string) => void calls.push(`payout ${referenceId} ${status}`),
      },
    });
    try {
      const route = await import('../../examples/nextjs/route.js'); // `next build` does this with no secrets
      const { request } = await callbackRequest();
      await expect(route.POST(request)).rejects.toMatchObject({ code: 'INVALID_CONFIGURATION' });

      Object.assign(process.env, settings); // the next request builds the handler: nothing was cached
      const genuine = await callbackRequest();
      expect((await route.POST(genuine.request)).status).toBe(200);
      expect(calls).toEqual([`paid ${genuine.referenceId}`]);
    } finally {
      Object.assign(process.env, saved);
      Reflect.deleteProperty(globalThis, 'orders');
    }
  });
});

describe('payments (examples/payment-methods.ts)', () => {
  it('sends each customer where the spec says, with amounts as numbers or decimal strings', async () => {
    const { payByBankTransfer, payByQr, payByWallet } = await import('../../examples/payment-methods.js');
    const checkout = (orderId: string) => ({
      orderId,
      total: '120.50',
      customerName: 'Aisyah Rahman',
      customerPhone: '60123456789',
    });
    const qr = await payByQr(gateway, checkout('EXQR1'));
    const bank = await payByBankTransfer(gateway, checkout('EXBANK1'), 'MB2U0227');
    const wallet = await payByWallet(gateway, { ...checkout('EXWALLET1'), total: 35 });
    expect(qr.customer_redirect_url).toBe(qr.payment_url);
    expect(bank.customer_redirect_url).toBe(bank.gateway.redirect_url);
    expect(wallet.customer_redirect_url).toBe(wallet.gateway.redirect_url);
    expect(mock.payments.map((p) => [p.payment_method, p.amount])).toEqual([
      ['QR_PAYMENT', 120.5],
      ['BANK_TRANSFER', 120.5],
      ['MOBILE_WALLET', 35],
    ]);
    expect(mock.getPayment('EXBANK1')?.metadata).toEqual({ provider_channel_id: 'MB2U0227' });
  });
});

describe('error handling (examples/errors.ts)', () => {
  const params = { ...customer, amount: '120.50', payment_method: 'QR_PAYMENT' as const };
  // A budget per client: the 429 below holds a shared one for its Retry-After (30 s), as it should.
  const client = () =>
    new MyrGateway({ baseUrl: mock.baseUrl, ...mock.merchant, maxRetries: 0, rateLimiter: new MemoryRateLimiter() });

  it('turns each failure into the next step of the checkout', async () => {
    const { startPayment } = await import('../../examples/errors.js');
    expect(await startPayment(client(), { ...params, reference_id: 'EXERR1' })).toMatchObject({ kind: 'redirect' });
    expect(await startPayment(client(), { ...params, amount: '10.005', reference_id: 'EXERR2' })).toMatchObject({
      kind: 'fix-input',
      field: 'amount',
    });
    mock.fault({ endpoint: 'payment.create', response: { type: 'rateLimit', retryAfter: 30 } });
    expect(await startPayment(client(), { ...params, reference_id: 'EXERR3' })).toEqual({
      kind: 'try-again-later',
      retryAfterSeconds: 30,
      code: 'RATE_LIMITED',
    });
    mock.setMerchantStatus(mock.merchant.merchantId, 'LOCKED');
    expect(await startPayment(client(), { ...params, reference_id: 'EXERR4' })).toMatchObject({
      kind: 'contact-support',
      code: 'MERCHANT_LOCKED',
    });
    // the invalid amount never left the machine
    expect(
      mock.requests.filter((r) => (r.body as { reference_id?: string } | undefined)?.reference_id === 'EXERR2'),
    ).toEqual([]);
  });
});

describe.skipIf(!hasRedisServer())('fleet (examples/fleet.ts) on a real redis-server', () => {
  let redisServer: RedisServer;
  beforeAll(async () => {
    redisServer = await RedisServer.start();
  });
  afterAll(() => redisServer.stop());

  it('two instances share one token and handle a callback once between them', async () => {
    const { createInstance } = await import('../../examples/fleet.js');
    const redis = [new Redis(redisServer.url), new Redis(redisServer.url)];
    const servers: Server[] = [];
    try {
      const fleet = { baseUrl: mock.baseUrl, merchantId: mock.merchant.merchantId, apiKey: mock.merchant.apiKey };
      const instances = redis.map((client) => createInstance(client, fleet));
      const urls: string[] = [];
      for (const instance of instances) {
        const server = instance.app.listen(0, '127.0.0.1');
        servers.push(server);
        urls.push(await listening(server));
      }
      const auth = mock.count('auth');
      await instances[0]?.gateway.payments.retrieve('nothing').catch(() => undefined);
      await instances[1]?.gateway.payments.retrieve('nothing').catch(() => undefined);
      expect(mock.count('auth') - auth).toBeLessThanOrEqual(1);

      const { referenceId, paymentId } = await paidOrder();
      const first = await mock.completePayment(paymentId, 'SUCCESS', {
        callbackUrl: urls[0] as string,
        retryDelaysMs: [],
      });
      const lookups = mock.count('payment.status');
      const again = await mock.completePayment(paymentId, 'SUCCESS', {
        callbackUrl: urls[1] as string,
        retryDelaysMs: [],
      });
      expect([first.attempts[0]?.status, again.attempts[0]?.status]).toEqual([200, 200]);
      expect(mock.count('payment.status')).toBe(lookups); // the second instance did not run the handler
      expect(shop.orders.get(referenceId)?.paid).toBe(true);
    } finally {
      for (const server of servers) server.close();
      await Promise.all(redis.map((client) => client.quit()));
    }
  });
});
