import { createHash, createHmac, hkdfSync } from 'node:crypto';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { RequestHandler } from 'msw';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createMockGateway, type CallbackOptions } from '../../src/testing/index.js';
import { buildSignedString } from '../../src/webhooks/signing-scheme.js';
import { call, deposit, getToken, withdrawal } from '../helpers/mock-http.js';

const API_KEY = 'sk_test_callbacks_key_42';
const START = Date.parse('2026-03-01T08:00:00.000Z');
let clock = START;

/** The spec's signature, computed here with node:crypto, independently of the project's signer. */
function expectedSignature(apiKey: string, body: Record<string, unknown>): string {
  const digest = createHash('sha256').update(apiKey, 'utf8').digest();
  const key = Buffer.from(hkdfSync('sha256', digest, Buffer.alloc(0), 'webhook-signature', 32));
  const signed = buildSignedString({
    webhook_id: body.webhook_id as string,
    payment_id: body.payment_id as string,
    reference_id: body.reference_id as string,
    amount: body.amount as number,
    currency: body.currency as string,
    status: body.status as string,
    timestamp: body.timestamp as string,
    completed_at: body.completed_at as string | null,
  });
  return createHmac('sha256', key).update(signed, 'utf8').digest('hex');
}

interface Received {
  path: string;
  headers: IncomingHttpHeaders;
  raw: string;
  body: Record<string, unknown>;
  at: number;
}

let receiver: Server;
let origin = '';
const received: Received[] = [];
let script: number[] = [];
let onCallback: ((r: Received) => Promise<void>) | undefined;

const mock = createMockGateway({
  environment: 'test',
  now: () => clock,
  merchants: [{ merchantId: 'MERCHANT_CB', apiKey: API_KEY }],
});
let defaultUrlMock: ReturnType<typeof createMockGateway>;

beforeAll(async () => {
  receiver = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const raw = Buffer.concat(chunks).toString('utf8');
      const entry: Received = {
        path: req.url ?? '',
        headers: req.headers,
        raw,
        body: JSON.parse(raw),
        at: performance.now(),
      };
      received.push(entry);
      const status = script.shift() ?? 200;
      void (onCallback?.(entry) ?? Promise.resolve()).then(() => {
        res.writeHead(status, { 'Content-Type': 'application/json' });
        res.end('{"ok":true}');
      });
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  origin = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}`;
  defaultUrlMock = createMockGateway({
    baseUrl: 'https://default.myr-gateway.test/api/v1',
    environment: 'test',
    now: () => clock,
    merchants: [{ merchantId: 'MERCHANT_D', apiKey: 'sk_test_default', defaultCallbackUrl: `${origin}/default` }],
  });
  mock.listen();
});
afterEach(() => {
  mock.reset();
  received.length = 0;
  script = [];
  onCallback = undefined;
  clock = START;
});
afterAll(async () => {
  mock.close();
  await new Promise<void>((resolve) => receiver.close(() => resolve()));
});

async function createDeposit(overrides: Record<string, unknown> = {}) {
  const token = await getToken(mock);
  const body = deposit({ callback_url: `${origin}/cb`, ...overrides });
  const res = await call(mock, 'POST', '/payment/request', { token, body });
  expect(res.status).toBe(200);
  return { token, body, data: res.body.data };
}

const FAST = { retryDelaysMs: [10, 20] };

/** Serves `other` through its own msw setupServer (as a merchant would) instead of `mock`, then restores `mock`. */
async function whileServing(other: { handlers: RequestHandler[] }, run: () => Promise<void>): Promise<void> {
  const { setupServer } = await import('msw/node');
  mock.close();
  const server = setupServer(...other.handlers);
  server.listen({ onUnhandledFrame: 'bypass' });
  try {
    await run();
  } finally {
    server.close();
    mock.listen();
  }
}

describe('completePayment', () => {
  it('sets the terminal status and delivers a signed callback with the spec body and headers', async () => {
    const { token, body, data } = await createDeposit({ amount: 100 });
    clock = START + 5_000;
    const delivery = await mock.completePayment(data.payment_id, 'SUCCESS', FAST);

    expect(delivery.delivered).toBe(true);
    expect(delivery.attempts).toEqual([
      { status: 200, at: START + 5_000, durationMs: expect.any(Number), responseBody: '{"ok":true}' },
    ]);
    expect(received).toHaveLength(1);
    const cb = received[0] as Received;
    expect(cb.path).toBe('/cb');
    const completedAt = new Date(START + 5_000).toISOString();
    expect(cb.body).toEqual({
      webhook_id: delivery.webhookId,
      payment_id: data.payment_id,
      reference_id: body.reference_id,
      amount: 100,
      currency: 'MYR',
      status: 'SUCCESS',
      transaction_type: 'DEPOSIT',
      gateway_reference: expect.stringMatching(/^GW/),
      completed_at: completedAt,
      created_at: new Date(START).toISOString(),
      timestamp: completedAt,
      signature: expect.stringMatching(/^[0-9a-f]{64}$/),
    });
    expect(cb.body.webhook_id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(cb.raw).not.toContain('provider_channel_id');
    expect(cb.body.signature).toBe(expectedSignature(API_KEY, cb.body));
    expect(cb.headers['content-type']).toBe('application/json');
    expect(cb.headers['x-webhook-signature']).toBe(cb.body.signature);
    expect(cb.headers['x-webhook-id']).toBe(cb.body.webhook_id);
    expect(cb.headers['x-webhook-timestamp']).toBe(cb.body.timestamp);
    expect(cb.headers['x-payment-id']).toBe(data.payment_id);

    const status = await call(mock, 'GET', `/payment/status/${data.payment_id as string}`, { token });
    expect(status.body.data).toMatchObject({
      status: 'SUCCESS',
      completed_at: completedAt,
      gateway_reference: cb.body.gateway_reference,
    });
  });

  it.each(['FAILED', 'EXPIRED', 'CANCELLED'] as const)(
    '%s leaves completed_at null and is signed with an empty completed_at',
    async (status) => {
      const { data } = await createDeposit();
      await mock.completePayment(data.payment_id, status, FAST);
      const cb = received[0] as Received;
      expect(cb.body.status).toBe(status);
      expect(cb.body.completed_at).toBeNull();
      expect(cb.body.signature).toBe(expectedSignature(API_KEY, cb.body));
      expect(mock.getPayment(data.payment_id)?.status).toBe(status);
    },
  );

  it('REFUNDED after SUCCESS keeps completed_at and gateway_reference', async () => {
    const { data } = await createDeposit();
    await mock.completePayment(data.payment_id, 'SUCCESS', FAST);
    clock += 60_000;
    await mock.completePayment(data.payment_id, 'REFUNDED', FAST);
    const [first, second] = received as [Received, Received];
    expect(second.body.status).toBe('REFUNDED');
    expect(second.body.completed_at).toBe(first.body.completed_at);
    expect(second.body.gateway_reference).toBe(first.body.gateway_reference);
    expect(second.body.webhook_id).not.toBe(first.body.webhook_id);
  });

  it('finds the payment by reference_id too', async () => {
    const { body } = await createDeposit();
    const delivery = await mock.completePayment(body.reference_id as string, 'SUCCESS', FAST);
    expect(delivery.delivered).toBe(true);
    expect(received[0]?.body.reference_id).toBe(body.reference_id);
  });

  it('retries on non-2xx after the given delays with the same webhook_id and body', async () => {
    const { data } = await createDeposit();
    script = [500, 404, 204];
    const delivery = await mock.completePayment(data.payment_id, 'SUCCESS', { retryDelaysMs: [30, 60] });
    expect(delivery.delivered).toBe(true);
    expect(delivery.attempts.map((a) => a.status)).toEqual([500, 404, 204]);
    expect(received).toHaveLength(3);
    expect(new Set(received.map((r) => r.raw)).size).toBe(1);
    expect(new Set(received.map((r) => r.headers['x-webhook-id'])).size).toBe(1);
    const [a, b, c] = received as [Received, Received, Received];
    expect(b.at - a.at).toBeGreaterThanOrEqual(25);
    expect(c.at - b.at).toBeGreaterThanOrEqual(55);
  });

  it('gives up after 3 attempts in total', async () => {
    const { data } = await createDeposit();
    script = [500, 500, 500, 500];
    const delivery = await mock.completePayment(data.payment_id, 'FAILED', FAST);
    expect(delivery.delivered).toBe(false);
    expect(delivery.attempts).toHaveLength(3);
    expect(received).toHaveLength(3);
  });

  it('counts a network error as a failed attempt and retries', async () => {
    const { data } = await createDeposit();
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const port = (closed.address() as AddressInfo).port;
    await new Promise<void>((resolve) => closed.close(() => resolve()));
    const delivery = await mock.completePayment(data.payment_id, 'SUCCESS', {
      ...FAST,
      callbackUrl: `http://127.0.0.1:${port}/x`,
    });
    expect(delivery.delivered).toBe(false);
    expect(delivery.attempts).toHaveLength(3);
    for (const attempt of delivery.attempts) {
      expect(attempt.status).toBeUndefined();
      expect(attempt.error).toMatch(/fetch failed|ECONNREFUSED/);
    }
  });

  it('duplicate: delivers the same callback once more after success', async () => {
    const { data } = await createDeposit();
    const delivery = await mock.completePayment(data.payment_id, 'SUCCESS', { ...FAST, duplicate: true });
    expect(received).toHaveLength(2);
    expect(received[0]?.raw).toBe(received[1]?.raw);
    expect(delivery.attempts).toMatchObject([
      { status: 200, at: START },
      { status: 200, at: START, duplicate: true },
    ]);
  });

  it('tamper: the body is changed after signing, so the signature no longer matches', async () => {
    const { data } = await createDeposit({ amount: 100 });
    await mock.completePayment(data.payment_id, 'SUCCESS', { ...FAST, tamper: (b) => ({ ...b, amount: 1000 }) });
    const cb = received[0] as Received;
    expect(cb.body.amount).toBe(1000);
    expect(cb.body.signature).not.toBe(expectedSignature(API_KEY, cb.body));
    expect(cb.body.signature).toBe(expectedSignature(API_KEY, { ...cb.body, amount: 100 }));
  });

  it('tamperHeaders changes only the headers', async () => {
    const { data } = await createDeposit();
    await mock.completePayment(data.payment_id, 'SUCCESS', {
      ...FAST,
      tamperHeaders: (h) => ({ ...h, 'X-Webhook-ID': 'other' }),
    });
    const cb = received[0] as Received;
    expect(cb.headers['x-webhook-id']).toBe('other');
    expect(cb.body.signature).toBe(expectedSignature(API_KEY, cb.body));
  });

  it('timestampOffsetMs produces a stale but correctly signed callback', async () => {
    const { data } = await createDeposit();
    await mock.completePayment(data.payment_id, 'SUCCESS', { ...FAST, timestampOffsetMs: -10 * 60_000 });
    const cb = received[0] as Received;
    expect(cb.body.timestamp).toBe(new Date(START - 600_000).toISOString());
    expect(cb.headers['x-webhook-timestamp']).toBe(cb.body.timestamp);
    expect(cb.body.signature).toBe(expectedSignature(API_KEY, cb.body));
  });

  it('the status API already reports the terminal status while the callback is being handled', async () => {
    const { token, data } = await createDeposit();
    let seen: string | undefined;
    onCallback = async (r) => {
      const res = await call(mock, 'GET', `/payment/status/${r.body.payment_id as string}`, { token });
      seen = res.body.data.status;
    };
    await mock.completePayment(data.payment_id, 'SUCCESS', FAST);
    expect(seen).toBe('SUCCESS');
  });

  it('changes the status without sending when there is no callback URL or deliver is false', async () => {
    const { data } = await createDeposit({ callback_url: undefined });
    const delivery = await mock.completePayment(data.payment_id, 'SUCCESS', FAST);
    expect(delivery).toMatchObject({ delivered: false, attempts: [], url: null });
    expect(mock.getPayment(data.payment_id)?.status).toBe('SUCCESS');
    const second = await createDeposit();
    await mock.completePayment(second.data.payment_id, 'CANCELLED', { deliver: false });
    expect(received).toHaveLength(0);
    expect(mock.getPayment(second.data.payment_id)?.status).toBe('CANCELLED');
  });

  it('rejects unknown payments and non-terminal statuses', async () => {
    await expect(mock.completePayment('PAY_NOPE', 'SUCCESS')).rejects.toThrow(/no payment/);
    const { data } = await createDeposit();
    await expect(mock.completeWithdrawal(data.payment_id, 'SUCCESS')).rejects.toThrow(/no withdrawal/);
    // @ts-expect-error PROCESSING is not terminal
    await expect(mock.completePayment(data.payment_id, 'PROCESSING')).rejects.toThrow(RangeError);
    expect(mock.getPayment(data.payment_id)?.status).toBe('PROCESSING');
  });

  it('refuses a delay or attempt timeout a timer cannot hold (it would fire after 1 ms), before the status changes', async () => {
    const { data } = await createDeposit();
    const cases: [CallbackOptions, string][] = [
      [{ retryDelaysMs: [10, 3e9] }, 'retryDelaysMs'],
      [{ retryDelaysMs: [-1] }, 'retryDelaysMs'],
      [{ attemptTimeoutMs: 3e9 }, 'attemptTimeoutMs'],
      [{ attemptTimeoutMs: 0 }, 'attemptTimeoutMs'],
    ];
    for (const [options, name] of cases) {
      await expect(mock.completePayment(data.payment_id, 'SUCCESS', options)).rejects.toThrow(
        new RangeError(
          `${name} must be ${name === 'retryDelaysMs' ? 'whole numbers of milliseconds from 0' : 'a whole number of milliseconds from 1'} to 2147483647`,
        ),
      );
    }
    expect(mock.getPayment(data.payment_id)?.status).toBe('PROCESSING');
    expect(received.filter((r) => r.body.payment_id === data.payment_id)).toEqual([]);
  });
});

describe('delivery transport', () => {
  it('listen() bypasses unmatched requests, so plain fetch reaches real servers on 127.0.0.1', async () => {
    const res = await fetch(`${origin}/direct`, { method: 'POST', body: '{"x":1}' });
    expect(res.status).toBe(200);
    expect(received[0]?.path).toBe('/direct');
  });

  it('callbackFetch replaces the fetch used for callbacks', async () => {
    const seen: Array<{ url: string; body: string }> = [];
    const custom = createMockGateway({
      baseUrl: 'https://custom.myr-gateway.test/api/v1',
      merchants: [{ merchantId: 'M', apiKey: 'k', defaultCallbackUrl: 'https://merchant.test/cb' }],
      callbackFetch: async (input, init) => {
        seen.push({
          url: input instanceof Request ? input.url : String(input),
          body: typeof init?.body === 'string' ? init.body : '',
        });
        return new Response(null, { status: seen.length === 1 ? 503 : 200 });
      },
    });
    await whileServing(custom, async () => {
      const token = await getToken(custom);
      const res = await call(custom, 'POST', '/payment/request', { token, body: deposit() });
      const delivery = await custom.completePayment(res.body.data.payment_id, 'SUCCESS', FAST);
      expect(delivery.attempts.map((a) => a.status)).toEqual([503, 200]);
      expect(seen.map((s) => s.url)).toEqual(['https://merchant.test/cb', 'https://merchant.test/cb']);
      expect(JSON.parse(seen[0]?.body ?? '{}').signature).toBe(
        expectedSignature('k', JSON.parse(seen[0]?.body ?? '{}')),
      );
      expect(received).toHaveLength(0);
    });
  });
});

describe('completeWithdrawal', () => {
  it("delivers to the merchant's default URL with bank_code and the masked account number", async () => {
    await whileServing(defaultUrlMock, async () => {
      const token = await getToken(defaultUrlMock);
      const body = withdrawal({ amount: 1234.5, account_number: '5140123456789', bank_code: 'TNGDMYNB' });
      const res = await call(defaultUrlMock, 'POST', '/payment/withdraw', { token, body });
      const delivery = await defaultUrlMock.completeWithdrawal(res.body.data.payment_id, 'SUCCESS', FAST);
      expect(delivery.delivered).toBe(true);
      const cb = received[0] as Received;
      expect(cb.path).toBe('/default');
      expect(cb.body).toMatchObject({
        payment_id: res.body.data.payment_id,
        reference_id: body.reference_id,
        amount: 1234.5,
        status: 'SUCCESS',
        transaction_type: 'WITHDRAWAL',
        bank_code: 'TNGDMYNB',
        account_number: '****6789',
      });
      expect(cb.raw).not.toContain('5140123456789');
      expect(cb.raw).not.toContain('Tan Wei Ming');
      expect(cb.body.signature).toBe(expectedSignature('sk_test_default', cb.body));
      expect(defaultUrlMock.getWithdrawal(body.reference_id as string)?.status).toBe('SUCCESS');
    });
  });

  it('deposits without callback_url fall back to the default URL too', async () => {
    await whileServing(defaultUrlMock, async () => {
      const token = await getToken(defaultUrlMock);
      const res = await call(defaultUrlMock, 'POST', '/payment/request', {
        token,
        body: deposit({ payment_method: 'QR_PAYMENT' }),
      });
      await defaultUrlMock.completePayment(res.body.data.payment_id, 'SUCCESS', FAST);
      expect(received[0]?.path).toBe('/default');
      expect(received[0]?.body).not.toHaveProperty('bank_code');
      expect(received[0]?.body).not.toHaveProperty('account_number');
    });
  });
});
