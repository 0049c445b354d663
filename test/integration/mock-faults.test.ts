import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createMockGateway } from '../../src/testing/index.js';
import { call, deposit, getToken, withdrawal } from '../helpers/mock-http.js';

const mock = createMockGateway();
let token: string;

beforeAll(() => mock.listen());
afterEach(() => mock.reset());
afterAll(() => mock.close());

const createPayment = (body = deposit()) => call(mock, 'POST', '/payment/request', { token, body });

describe('fault injection', () => {
  it("'status' answers the error envelope with the given or default code, once by default", async () => {
    token = await getToken(mock);
    mock.fault({ endpoint: 'payment.create', response: { type: 'status', status: 502 } });
    mock.fault({
      endpoint: 'payment.create',
      response: { type: 'status', status: 500, code: 'BOOM', message: 'kaput', headers: { 'X-Extra': '1' } },
    });
    const first = await createPayment();
    expect(first.status).toBe(502);
    expect(first.body).toEqual({ status: 'error', error: 'GATEWAY_ERROR', message: expect.any(String) });
    const second = await createPayment();
    expect(second.status).toBe(500);
    expect(second.body).toEqual({ status: 'error', error: 'BOOM', message: 'kaput' });
    expect(second.headers.get('x-extra')).toBe('1');
    expect((await createPayment()).status).toBe(200);
    expect(mock.payments).toHaveLength(1);
  });

  it.each([
    [503, 'NO_GATEWAY_AVAILABLE'],
    [504, 'GATEWAY_TIMEOUT'],
    [429, 'RATE_LIMITED'],
  ])('a %i status fault defaults to %s', async (status, code) => {
    mock.fault({ response: { type: 'status', status } });
    const res = await call(mock, 'GET', '/payment/status/X1');
    expect(res.status).toBe(status);
    expect(res.body.error).toBe(code);
  });

  it('matches faults by endpoint in FIFO order and honours times', async () => {
    token = await getToken(mock);
    mock.fault({ endpoint: 'withdraw', response: { type: 'status', status: 504 } });
    mock.fault({ endpoint: 'payment.create', times: 2, response: { type: 'status', status: 503 } });
    mock.fault({ endpoint: '*', response: { type: 'status', status: 500 } });
    expect((await createPayment()).status).toBe(503);
    expect((await call(mock, 'GET', '/payment/status/X1', { token })).status).toBe(500);
    expect((await createPayment()).status).toBe(503);
    expect((await createPayment()).status).toBe(200);
    expect((await call(mock, 'POST', '/payment/withdraw', { token, body: withdrawal() })).status).toBe(504);
    expect((await call(mock, 'GET', '/payment/status/X1', { token })).status).toBe(404);
  });

  it("'rateLimit' answers 429 with Retry-After in seconds or verbatim, in both body shapes", async () => {
    const date = 'Wed, 21 Oct 2026 07:28:00 GMT';
    mock.fault({ endpoint: 'auth', response: { type: 'rateLimit', retryAfter: 7 } });
    mock.fault({ endpoint: 'auth', response: { type: 'rateLimit', retryAfter: date, shape: 'nest' } });
    mock.fault({ endpoint: 'auth', response: { type: 'rateLimit' } });
    const creds = { merchant_id: mock.merchant.merchantId, api_key: mock.merchant.apiKey };
    const a = await call(mock, 'POST', '/auth/token', { body: creds });
    expect(a.status).toBe(429);
    expect(a.headers.get('retry-after')).toBe('7');
    expect(a.body).toEqual({ status: 'error', error: 'RATE_LIMITED', message: expect.any(String) });
    const b = await call(mock, 'POST', '/auth/token', { body: creds });
    expect(b.status).toBe(429);
    expect(b.headers.get('retry-after')).toBe(date);
    expect(b.body).toEqual({
      statusCode: 429,
      message: 'Too Many Requests',
      error: 'Too Many Requests',
      timestamp: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
      path: '/api/v1/auth/token',
      correlationId: b.headers.get('x-correlation-id'),
    });
    const c = await call(mock, 'POST', '/auth/token', { body: creds });
    expect(c.status).toBe(429);
    expect(c.headers.get('retry-after')).toBeNull();
    expect((await call(mock, 'POST', '/auth/token', { body: creds })).status).toBe(200);
  });

  it("'html' answers a text/html page", async () => {
    mock.fault({ response: { type: 'html', status: 502 } });
    const res = await call(mock, 'POST', '/auth/token', { body: {} });
    expect(res.status).toBe(502);
    expect(res.headers.get('content-type')).toContain('text/html');
    expect(res.text).toMatch(/^<!DOCTYPE html>/);
  });

  it("'networkError' makes fetch fail", async () => {
    mock.fault({ endpoint: 'auth', response: { type: 'networkError' } });
    await expect(call(mock, 'POST', '/auth/token', { body: {} })).rejects.toThrow(TypeError);
    expect(mock.requests[0]?.status).toBe(0);
  });

  it("'delay' waits, then answers normally or with the next matching fault", async () => {
    mock.fault({ endpoint: 'payment.status', response: { type: 'delay', ms: 120 } });
    let started = performance.now();
    expect((await call(mock, 'GET', '/payment/status/X1')).status).toBe(401);
    expect(performance.now() - started).toBeGreaterThanOrEqual(100);

    mock.fault({ endpoint: 'payment.status', response: { type: 'delay', ms: 60 } });
    mock.fault({ endpoint: 'payment.status', response: { type: 'status', status: 504 } });
    started = performance.now();
    expect((await call(mock, 'GET', '/payment/status/X1')).status).toBe(504);
    expect(performance.now() - started).toBeGreaterThanOrEqual(50);
    expect((await call(mock, 'GET', '/payment/status/X1')).status).toBe(401);
  });

  it("'tokenExpired' answers 401 TOKEN_EXPIRED while the token stays valid", async () => {
    token = await getToken(mock);
    mock.fault({ endpoint: 'payment.create', response: { type: 'tokenExpired' } });
    const res = await createPayment();
    expect(res.status).toBe(401);
    expect(res.body.error).toBe('TOKEN_EXPIRED');
    expect(mock.payments).toHaveLength(0);
    expect((await createPayment()).status).toBe(200);
  });

  it("'body' answers an arbitrary JSON body, or a verbatim string", async () => {
    token = await getToken(mock);
    mock.fault({
      endpoint: 'payment.create',
      response: { type: 'body', body: { status: 'success', data: { payment_id: 42 } } },
    });
    mock.fault({
      endpoint: 'payment.create',
      response: { type: 'body', status: 201, body: '{"status":"succ', headers: { 'X-A': 'b' } },
    });
    const a = await createPayment();
    expect(a.status).toBe(200);
    expect(a.body).toEqual({ status: 'success', data: { payment_id: 42 } });
    const b = await createPayment();
    expect(b.status).toBe(201);
    expect(b.text).toBe('{"status":"succ');
    expect(b.headers.get('x-a')).toBe('b');
    expect(mock.payments).toHaveLength(0);
  });

  it("'after' + networkError stores the withdrawal, then drops the answer", async () => {
    token = await getToken(mock);
    const body = withdrawal();
    mock.fault({ endpoint: 'withdraw', when: 'after', response: { type: 'networkError' } });
    await expect(call(mock, 'POST', '/payment/withdraw', { token, body })).rejects.toThrow(TypeError);
    const stored = mock.getWithdrawal(body.reference_id as string);
    expect(stored?.status).toBe('PROCESSING');
    const again = await call(mock, 'POST', '/payment/withdraw', { token, body });
    expect(again.status).toBe(409);
    const status = await call(mock, 'GET', `/payment/status/${body.reference_id as string}`, { token });
    expect(status.body.data.payment_id).toBe(stored?.payment_id);
  });

  it("'after' + 504 stores the payment and answers 504; a 'before' fault stores nothing", async () => {
    token = await getToken(mock);
    mock.fault({ endpoint: 'payment.create', when: 'after', response: { type: 'status', status: 504 } });
    const body = deposit();
    expect((await createPayment(body)).status).toBe(504);
    expect(mock.getPayment(body.reference_id as string)?.status).toBe('PROCESSING');
    mock.fault({ endpoint: 'payment.create', response: { type: 'status', status: 504 } });
    expect((await createPayment(deposit())).status).toBe(504);
    expect(mock.payments).toHaveLength(1);
  });

  it("'after' faults still count the request in the rate window", async () => {
    const limited = createMockGateway({ baseUrl: 'https://rl.myr-gateway.test/api/v1', rateLimits: { auth: 2 } });
    mock.close();
    const { setupServer } = await import('msw/node');
    const server = setupServer(...limited.handlers);
    server.listen({ onUnhandledFrame: 'bypass' });
    try {
      limited.fault({ endpoint: 'auth', when: 'after', times: 2, response: { type: 'status', status: 502 } });
      const creds = { merchant_id: limited.merchant.merchantId, api_key: limited.merchant.apiKey };
      expect((await call(limited, 'POST', '/auth/token', { body: creds })).status).toBe(502);
      expect((await call(limited, 'POST', '/auth/token', { body: creds })).status).toBe(502);
      expect((await call(limited, 'POST', '/auth/token', { body: creds })).status).toBe(429);
    } finally {
      server.close();
      mock.listen();
    }
  });

  it('reset() drops queued faults', async () => {
    mock.fault({ times: Infinity, response: { type: 'status', status: 500 } });
    expect((await call(mock, 'GET', '/payment/status/X1')).status).toBe(500);
    expect((await call(mock, 'GET', '/payment/status/X1')).status).toBe(500);
    mock.reset();
    expect((await call(mock, 'GET', '/payment/status/X1')).status).toBe(401);
  });

  it('rejects nonsensical faults', () => {
    expect(() => mock.fault({ times: 0, response: { type: 'networkError' } })).toThrow(RangeError);
    expect(() => mock.fault({ response: { type: 'delay', ms: -1 } })).toThrow(RangeError);
  });
});

describe('request recording', () => {
  it('records every request in order with endpoint, method, relative path, headers, body and status', async () => {
    token = await getToken(mock);
    const body = deposit();
    await createPayment(body);
    await call(mock, 'GET', '/payment/status/ABC1?x=1', { token });
    mock.fault({ endpoint: 'withdraw', response: { type: 'networkError' } });
    await call(mock, 'POST', '/payment/withdraw', { token, rawBody: 'not json' }).catch(() => undefined);
    await call(mock, 'GET', '/elsewhere');

    expect(mock.requests.map((r) => [r.endpoint, r.method, r.path, r.status])).toEqual([
      ['auth', 'POST', '/auth/token', 200],
      ['payment.create', 'POST', '/payment/request', 200],
      ['payment.status', 'GET', '/payment/status/ABC1?x=1', 404],
      ['withdraw', 'POST', '/payment/withdraw', 0],
      ['unknown', 'GET', '/elsewhere', 404],
    ]);
    const created = mock.requests[1];
    expect(created?.body).toEqual(body);
    expect(created?.headers.authorization).toBe(`Bearer ${token}`);
    expect(created?.headers['content-type']).toBe('application/json');
    expect(typeof created?.at).toBe('number');
    expect(mock.requests[2]?.body).toBeUndefined();
    expect(mock.requests[3]?.body).toBe('not json');
  });

  it('count() counts per endpoint and in total', async () => {
    token = await getToken(mock);
    await createPayment();
    await createPayment();
    await call(mock, 'GET', '/payment/status/X1', { token });
    expect(mock.count('auth')).toBe(1);
    expect(mock.count('payment.create')).toBe(2);
    expect(mock.count('payment.status')).toBe(1);
    expect(mock.count('withdraw')).toBe(0);
    expect(mock.count()).toBe(4);
    mock.reset();
    expect(mock.count()).toBe(0);
    expect(mock.requests).toHaveLength(0);
  });
});
