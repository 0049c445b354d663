import { setupServer } from 'msw/node';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createMockGateway } from '../../src/testing/index.js';
import { call, deposit, getToken, withdrawal } from '../helpers/mock-http.js';

const START = Date.parse('2026-03-01T08:00:00.000Z');
let clock = START;
const now = () => clock;
const merchants = [
  { merchantId: 'MERCHANT_A', apiKey: 'sk_test_a' },
  { merchantId: 'MERCHANT_B', apiKey: 'sk_test_b' },
];
const mock = createMockGateway({ now, merchants });
const small = createMockGateway({
  baseUrl: 'https://small.myr-gateway.test/api/v1',
  now,
  merchants,
  rateLimits: { paymentRequest: 3, withdraw: 2, other: 2 },
});
const nest = createMockGateway({
  baseUrl: 'https://nest.myr-gateway.test/api/v1',
  now,
  rateLimitShape: 'nest',
  rateLimits: { other: 1 },
});
const off = createMockGateway({ baseUrl: 'https://off.myr-gateway.test/api/v1', now, rateLimits: false });
const server = setupServer(...mock.handlers, ...small.handlers, ...nest.handlers, ...off.handlers);

beforeAll(() => server.listen({ onUnhandledFrame: 'bypass' }));
afterEach(() => {
  for (const m of [mock, small, nest, off]) m.reset();
  clock = START;
});
afterAll(() => server.close());

const auth = (m = mock, merchant_id = 'MERCHANT_A', api_key = 'sk_test_a') =>
  call(m, 'POST', '/auth/token', { body: { merchant_id, api_key } });

describe('rate limiting', () => {
  it('/auth/token allows 5 per sliding minute per merchant_id, then 429 with Retry-After and headers', async () => {
    clock = START;
    const remaining: string[] = [];
    for (let i = 0; i < 5; i++) {
      const res = await auth();
      expect(res.status).toBe(200);
      expect(res.headers.get('x-ratelimit-limit')).toBe('5');
      remaining.push(res.headers.get('x-ratelimit-remaining') as string);
      clock += 10_000; // requests at 0, 10, 20, 30, 40 s
    }
    expect(remaining).toEqual(['4', '3', '2', '1', '0']);
    // t = 50 s: the oldest request (t = 0) frees its slot at 60 s
    const limited = await auth();
    expect(limited.status).toBe(429);
    expect(limited.body).toEqual({ status: 'error', error: 'RATE_LIMITED', message: expect.any(String) });
    expect(limited.headers.get('retry-after')).toBe('10');
    expect(limited.headers.get('x-ratelimit-remaining')).toBe('0');
    expect(limited.headers.get('x-ratelimit-reset')).toBe(String((START + 60_000) / 1000));
    // wrong credentials are limited too (the counting happens before the check)
    expect((await auth(mock, 'MERCHANT_A', 'wrong')).status).toBe(429);
    // another merchant has its own window
    expect((await auth(mock, 'MERCHANT_B', 'sk_test_b')).status).toBe(200);
    // sliding: at 60 s exactly one slot is free again
    clock = START + 60_000;
    expect((await auth()).status).toBe(200);
    expect((await auth()).status).toBe(429);
  });

  it('limits payment creation, withdrawals and other requests per merchant with their own limits', async () => {
    const tokenA = await getToken(small, merchants[0]);
    const tokenB = await getToken(small, merchants[1]);
    for (let i = 0; i < 3; i++) {
      const res = await call(small, 'POST', '/payment/request', { token: tokenA, body: deposit() });
      expect(res.status).toBe(200);
      expect(res.headers.get('x-ratelimit-limit')).toBe('3');
    }
    const limited = await call(small, 'POST', '/payment/request', { token: tokenA, body: deposit() });
    expect(limited.status).toBe(429);
    expect(limited.headers.get('retry-after')).toBe('60');
    expect(small.payments).toHaveLength(3);
    // a different bucket and a different merchant are unaffected
    expect((await call(small, 'POST', '/payment/request', { token: tokenB, body: deposit() })).status).toBe(200);
    for (let i = 0; i < 2; i++) {
      expect((await call(small, 'POST', '/payment/withdraw', { token: tokenA, body: withdrawal() })).status).toBe(200);
    }
    expect((await call(small, 'POST', '/payment/withdraw', { token: tokenA, body: withdrawal() })).status).toBe(429);
    expect((await call(small, 'GET', '/payment/status/X1', { token: tokenA })).headers.get('x-ratelimit-limit')).toBe(
      '2',
    );
    expect((await call(small, 'GET', '/payment/status/X1', { token: tokenA })).status).toBe(404);
    expect((await call(small, 'GET', '/payment/status/X1', { token: tokenA })).status).toBe(429);
  });

  it('uses the defaults 100 / 50 / 100 for the other buckets', async () => {
    const token = await getToken(mock);
    const create = await call(mock, 'POST', '/payment/request', { token, body: deposit() });
    expect(create.headers.get('x-ratelimit-limit')).toBe('100');
    expect(create.headers.get('x-ratelimit-remaining')).toBe('99');
    const wd = await call(mock, 'POST', '/payment/withdraw', { token, body: withdrawal() });
    expect(wd.headers.get('x-ratelimit-limit')).toBe('50');
    const status = await call(mock, 'GET', '/payment/status/X1', { token });
    expect(status.headers.get('x-ratelimit-limit')).toBe('100');
  });

  it("answers the spec's second 429 body when rateLimitShape is 'nest'", async () => {
    const token = await getToken(nest);
    expect((await call(nest, 'GET', '/payment/status/X1', { token })).status).toBe(404);
    const res = await call(nest, 'GET', '/payment/status/X1', { token });
    expect(res.status).toBe(429);
    expect(res.headers.get('retry-after')).toBe('60');
    expect(res.body).toEqual({
      statusCode: 429,
      message: 'Too Many Requests',
      error: 'Too Many Requests',
      timestamp: new Date(START).toISOString(),
      path: '/api/v1/payment/status/X1',
      correlationId: res.headers.get('x-correlation-id'),
    });
  });

  it('rateLimits: false never limits and sends no X-RateLimit headers', async () => {
    for (let i = 0; i < 8; i++) {
      const res = await auth(off, 'MERCHANT_TEST', 'sk_test_mock_api_key_0001');
      expect(res.status).toBe(200);
      expect(res.headers.get('x-ratelimit-limit')).toBeNull();
      expect(res.headers.get('x-correlation-id')).not.toBeNull();
    }
  });
});
