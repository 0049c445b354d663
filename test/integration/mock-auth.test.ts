import { setupServer } from 'msw/node';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createMockGateway } from '../../src/testing/index.js';
import { call, deposit, getToken } from '../helpers/mock-http.js';

let clock = Date.parse('2026-03-01T08:00:00.000Z');
const mock = createMockGateway({
  now: () => clock,
  merchants: [
    { merchantId: 'MERCHANT_A', apiKey: 'sk_test_a' },
    { merchantId: 'MERCHANT_OFF', apiKey: 'sk_test_off', status: 'DISABLED' },
    { merchantId: 'MERCHANT_LOCK', apiKey: 'sk_test_lock', status: 'LOCKED' },
  ],
});

beforeAll(() => mock.listen());
afterEach(() => {
  mock.reset();
  clock = Date.parse('2026-03-01T08:00:00.000Z');
});
afterAll(() => mock.close());

describe('POST /auth/token', () => {
  it('issues an opaque Bearer token for valid credentials (A1)', async () => {
    const res = await call(mock, 'POST', '/auth/token', { body: { merchant_id: 'MERCHANT_A', api_key: 'sk_test_a' } });
    expect(res.status).toBe(200);
    expect(res.body.status).toBe('success');
    expect(res.body.data.token_type).toBe('Bearer');
    expect(res.body.data.expires_in).toBe(3600);
    expect(res.body.data.access_token).toMatch(/^\S{20,}$/);
    const second = await getToken(mock);
    expect(second).not.toBe(res.body.data.access_token);
  });

  it('exposes the first merchant as mock.merchant', () => {
    expect(mock.merchant).toEqual({ merchantId: 'MERCHANT_A', apiKey: 'sk_test_a' });
  });

  it.each([[{ merchant_id: 'MERCHANT_A', api_key: 'wrong' }], [{ merchant_id: 'NOBODY', api_key: 'sk_test_a' }]])(
    'answers 401 INVALID_CREDENTIALS for %j',
    async (body) => {
      const res = await call(mock, 'POST', '/auth/token', { body });
      expect(res.status).toBe(401);
      expect(res.body).toEqual({ status: 'error', error: 'INVALID_CREDENTIALS', message: expect.any(String) });
    },
  );

  it('answers 403 MERCHANT_DISABLED and MERCHANT_LOCKED', async () => {
    const off = await call(mock, 'POST', '/auth/token', {
      body: { merchant_id: 'MERCHANT_OFF', api_key: 'sk_test_off' },
    });
    expect(off.status).toBe(403);
    expect(off.body.error).toBe('MERCHANT_DISABLED');
    const lock = await call(mock, 'POST', '/auth/token', {
      body: { merchant_id: 'MERCHANT_LOCK', api_key: 'sk_test_lock' },
    });
    expect(lock.status).toBe(403);
    expect(lock.body.error).toBe('MERCHANT_LOCKED');
  });

  it.each([
    ['missing api_key', JSON.stringify({ merchant_id: 'MERCHANT_A' })],
    ['not JSON', '{merchant_id:'],
    ['an array', '[]'],
    ['a number api_key', JSON.stringify({ merchant_id: 'MERCHANT_A', api_key: 1 })],
  ])('answers 400 VALIDATION_ERROR for a body with %s', async (_name, rawBody) => {
    const res = await call(mock, 'POST', '/auth/token', { rawBody });
    expect(res.status).toBe(400);
    expect(res.body.error).toBe('VALIDATION_ERROR');
  });

  it('honours tokenTtlSeconds', async () => {
    // A second mock on another base URL, served by the same process through its handlers.
    const short = createMockGateway({ baseUrl: 'https://short.myr-gateway.test/api/v1', tokenTtlSeconds: 60 });
    mock.close();
    const server = setupServer(...short.handlers);
    server.listen({ onUnhandledFrame: 'bypass' });
    try {
      const res = await call(short, 'POST', '/auth/token', {
        body: { merchant_id: 'MERCHANT_TEST', api_key: 'sk_test_mock_api_key_0001' },
      });
      expect(res.body.data.expires_in).toBe(60);
    } finally {
      server.close();
      mock.listen();
    }
  });
});

describe('authenticated endpoints', () => {
  it('answer 401 UNAUTHORIZED without a token, with a malformed header, or with an unknown token', async () => {
    for (const headers of [{}, { Authorization: 'Basic abc' }, { Authorization: 'Bearer not-a-token' }]) {
      const res = await call(mock, 'GET', '/payment/status/ANY1', { headers });
      expect(res.status).toBe(401);
      expect(res.body).toEqual({ status: 'error', error: 'UNAUTHORIZED', message: expect.any(String) });
    }
    const create = await call(mock, 'POST', '/payment/request', { body: deposit() });
    expect(create.status).toBe(401);
    expect(create.body.error).toBe('UNAUTHORIZED');
  });

  it('answer 401 TOKEN_EXPIRED once the clock passes the token lifetime', async () => {
    const token = await getToken(mock);
    clock += 3_599_000;
    expect((await call(mock, 'GET', '/payment/status/ANY1', { token })).status).toBe(404);
    clock += 1_000;
    const res = await call(mock, 'GET', '/payment/status/ANY1', { token });
    expect(res.status).toBe(401);
    expect(res.body.error).toBe('TOKEN_EXPIRED');
    const fresh = await getToken(mock);
    expect((await call(mock, 'GET', '/payment/status/ANY1', { token: fresh })).status).toBe(404);
  });

  it('answer 401 TOKEN_EXPIRED for every token issued before expireTokens()', async () => {
    const a = await getToken(mock);
    const b = await getToken(mock);
    mock.expireTokens();
    for (const token of [a, b]) {
      const res = await call(mock, 'POST', '/payment/request', { token, body: deposit() });
      expect(res.status).toBe(401);
      expect(res.body.error).toBe('TOKEN_EXPIRED');
    }
    expect(mock.payments).toHaveLength(0);
    const fresh = await getToken(mock);
    expect((await call(mock, 'POST', '/payment/request', { token: fresh, body: deposit() })).status).toBe(200);
    expect(mock.payments).toHaveLength(1);
  });

  it('answer 403 when the merchant of an existing token is disabled or locked', async () => {
    const token = await getToken(mock);
    mock.setMerchantStatus('MERCHANT_A', 'DISABLED');
    const off = await call(mock, 'GET', '/payment/status/X1', { token });
    expect(off.status).toBe(403);
    expect(off.body.error).toBe('MERCHANT_DISABLED');
    mock.setMerchantStatus('MERCHANT_A', 'LOCKED');
    const locked = await call(mock, 'POST', '/payment/withdraw', { token, body: {} });
    expect(locked.status).toBe(403);
    expect(locked.body.error).toBe('MERCHANT_LOCKED');
  });

  it('reset() restores merchant statuses and keeps the tokens it issued', async () => {
    const token = await getToken(mock);
    mock.setMerchantStatus('MERCHANT_A', 'LOCKED');
    expect((await call(mock, 'GET', '/payment/status/X1', { token })).status).toBe(403);
    mock.reset();
    expect((await call(mock, 'GET', '/payment/status/X1', { token })).status).toBe(404);
  });

  it('every answer carries X-Correlation-ID and the X-RateLimit headers', async () => {
    const answers = [
      await call(mock, 'POST', '/auth/token', { body: { merchant_id: 'MERCHANT_A', api_key: 'x' } }),
      await call(mock, 'GET', '/payment/status/X1'),
      await call(mock, 'POST', '/payment/request', { token: await getToken(mock), body: deposit() }),
    ];
    const ids = new Set<string>();
    for (const res of answers) {
      const id = res.headers.get('x-correlation-id');
      expect(id).toMatch(/^[0-9a-f-]{36}$/);
      ids.add(id as string);
      expect(Number(res.headers.get('x-ratelimit-limit'))).toBeGreaterThan(0);
      expect(res.headers.get('x-ratelimit-remaining')).toMatch(/^\d+$/);
      expect(Number(res.headers.get('x-ratelimit-reset'))).toBeGreaterThanOrEqual(Math.floor(clock / 1000));
    }
    expect(ids.size).toBe(3);
  });

  it('unknown paths answer 404 and wrong methods 405, recorded as unknown', async () => {
    const token = await getToken(mock);
    expect((await call(mock, 'GET', '/nope', { token })).status).toBe(404);
    const wrong = await call(mock, 'GET', '/payment/request', { token });
    expect(wrong.status).toBe(405);
    expect(mock.count('unknown')).toBe(2);
  });
});
