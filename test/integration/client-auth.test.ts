import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import {
  AuthenticationError,
  MemoryTokenStore,
  MyrGateway,
  PermissionDeniedError,
  RateLimitError,
} from '../../src/index.js';
import { createMockGateway } from '../../src/testing/index.js';
import { caught, clientFor, paymentParams } from '../helpers/client.js';

let clock = Date.parse('2026-11-22T08:00:00Z');
const now = () => clock;
const mock = createMockGateway({
  now,
  merchants: [
    { merchantId: 'MERCHANT_TEST', apiKey: 'sk_test_mock_api_key_0001' },
    { merchantId: 'MERCHANT_OFF', apiKey: 'sk_test_disabled_0002', status: 'DISABLED' },
    { merchantId: 'MERCHANT_LOCK', apiKey: 'sk_test_locked_0003', status: 'LOCKED' },
  ],
});
beforeAll(() => mock.listen());
afterEach(() => {
  mock.reset();
  clock += 120_000; // a fresh rate window for every test
});
afterAll(() => mock.close());

describe('access tokens', () => {
  it('requests one token and reuses it for later calls', async () => {
    const { gateway } = clientFor(mock, { now });
    const first = await gateway.payments.create(paymentParams());
    await gateway.payments.retrieve(first.payment_id);
    await gateway.payments.retrieve(first.reference_id);
    expect(mock.count('auth')).toBe(1);
    const auths = mock.requests.filter((r) => r.endpoint !== 'auth').map((r) => r.headers.authorization);
    expect(new Set(auths).size).toBe(1);
    expect(auths[0]).toMatch(/^Bearer \S+$/);
  });

  it('sends merchant_id and api_key to POST /auth/token', async () => {
    const { gateway } = clientFor(mock, { now });
    await gateway.payments.create(paymentParams());
    const auth = mock.requests.find((r) => r.endpoint === 'auth');
    expect(auth?.method).toBe('POST');
    expect(auth?.body).toEqual({ merchant_id: mock.merchant.merchantId, api_key: mock.merchant.apiKey });
  });

  it('fetches the token single-flight: 50 concurrent calls on a cold cache cause one token request', async () => {
    const { gateway } = clientFor(mock, { now });
    mock.fault({ endpoint: 'auth', response: { type: 'delay', ms: 50 } });
    const results = await Promise.all(Array.from({ length: 50 }, () => gateway.payments.create(paymentParams())));
    expect(results).toHaveLength(50);
    expect(mock.count('auth')).toBe(1);
    expect(mock.count('payment.create')).toBe(50);
  });

  it('refreshes shortly before expiry, not after', async () => {
    const { gateway } = clientFor(mock, { now, tokenRefreshMarginMs: 60_000 });
    await gateway.payments.create(paymentParams());
    clock += 3_600_000 - 61_000; // 61 s before expiry: still reused
    await gateway.payments.create(paymentParams());
    expect(mock.count('auth')).toBe(1);
    clock += 2_000; // 59 s before expiry: refreshed ahead of time
    await gateway.payments.create(paymentParams());
    expect(mock.count('auth')).toBe(2);
    expect(mock.requests.every((r) => r.status < 400)).toBe(true);
  });

  it('on TOKEN_EXPIRED drops the token, refreshes once and retries the call once', async () => {
    const { gateway } = clientFor(mock, { now });
    await gateway.payments.create(paymentParams());
    mock.expireTokens();
    const payment = await gateway.payments.create(paymentParams());
    expect(payment.payment_id).toMatch(/^PAY_/);
    expect(mock.count('auth')).toBe(2);
    expect(mock.requests.filter((r) => r.endpoint === 'payment.create').map((r) => r.status)).toEqual([200, 401, 200]);
  });

  it('refreshes once for many concurrent calls that all meet TOKEN_EXPIRED', async () => {
    const { gateway } = clientFor(mock, { now });
    await gateway.payments.create(paymentParams());
    mock.expireTokens();
    await Promise.all(Array.from({ length: 20 }, () => gateway.payments.create(paymentParams())));
    expect(mock.count('auth')).toBe(2);
  });

  it('gives up after one refresh when the fresh token is refused as expired too', async () => {
    const { gateway } = clientFor(mock, { now });
    mock.fault({ endpoint: 'payment.create', times: 2, response: { type: 'tokenExpired' } });
    const error = await caught(gateway.payments.create(paymentParams()));
    expect(error).toBeInstanceOf(AuthenticationError);
    expect(error.code).toBe('TOKEN_EXPIRED');
    expect(mock.count('auth')).toBe(2);
    expect(mock.count('payment.create')).toBe(2);
    expect(error.retryable).toBe(true);
  });

  it('on UNAUTHORIZED for a cached token (service forgot it) re-authenticates once and retries once', async () => {
    const { gateway } = clientFor(mock, { now });
    await gateway.payments.create(paymentParams());
    mock.reset();
    // the service no longer knows the cached token (reset() keeps tokens, so say it with a 401)
    mock.fault({ endpoint: 'payment.create', response: { type: 'status', status: 401, code: 'UNAUTHORIZED' } });
    const payment = await gateway.payments.create(paymentParams());
    expect(payment.payment_id).toMatch(/^PAY_/);
    expect(mock.requests.map((r) => `${r.endpoint}:${r.status}`)).toEqual([
      'payment.create:401',
      'auth:200',
      'payment.create:200',
    ]);
  });

  it('a second UNAUTHORIZED after the fresh token is final, not retried', async () => {
    const { gateway, delays } = clientFor(mock, { now });
    await gateway.payments.create(paymentParams());
    mock.fault({
      endpoint: 'payment.create',
      times: 2,
      response: { type: 'status', status: 401, code: 'UNAUTHORIZED' },
    });
    const error = await caught(gateway.payments.create(paymentParams()));
    expect(error).toBeInstanceOf(AuthenticationError);
    expect(error.code).toBe('UNAUTHORIZED');
    expect(error.status).toBe(401);
    expect(error.retryable).toBe(false);
    expect(mock.count('payment.create')).toBe(3);
    expect(mock.count('auth')).toBe(2);
    expect(delays).toEqual([]);
  });

  it('after a fresh token was refused too, the next call sends a new token, never the refused one', async () => {
    const { gateway } = clientFor(mock, { now });
    await gateway.payments.create(paymentParams());
    mock.fault({
      endpoint: 'payment.create',
      times: 2,
      response: { type: 'status', status: 401, code: 'UNAUTHORIZED' },
    });
    await caught(gateway.payments.create(paymentParams()));
    const refused = mock.requests.filter((r) => r.endpoint === 'payment.create').at(-1)?.headers.authorization;
    const before = mock.requests.length;
    await gateway.payments.create(paymentParams());
    const next = mock.requests.slice(before);
    expect(next.map((r) => `${r.endpoint}:${r.status}`)).toEqual(['auth:200', 'payment.create:200']);
    expect(next[1]?.headers.authorization).not.toBe(refused);
  });

  it.each([
    [
      'wrong api_key',
      { merchantId: 'MERCHANT_TEST', apiKey: 'sk_wrong' },
      'INVALID_CREDENTIALS',
      401,
      AuthenticationError,
    ],
    [
      'disabled merchant',
      { merchantId: 'MERCHANT_OFF', apiKey: 'sk_test_disabled_0002' },
      'MERCHANT_DISABLED',
      403,
      PermissionDeniedError,
    ],
    [
      'locked merchant',
      { merchantId: 'MERCHANT_LOCK', apiKey: 'sk_test_locked_0003' },
      'MERCHANT_LOCKED',
      403,
      PermissionDeniedError,
    ],
  ])('%s: %s is not retried', async (_label, creds, code, status, klass) => {
    const { gateway, delays } = clientFor(mock, { now, ...creds });
    const error = await caught(gateway.payments.create(paymentParams()));
    expect(error).toBeInstanceOf(klass);
    expect(error.code).toBe(code);
    expect(error.status).toBe(status);
    expect(error.retryable).toBe(false);
    expect(mock.count('auth')).toBe(1);
    expect(mock.count('payment.create')).toBe(0);
    expect(delays).toEqual([]);
  });

  it('never sends a sixth token request within a minute, whatever the callers do', async () => {
    const { gateway } = clientFor(mock, { now, apiKey: 'sk_wrong' });
    const errors = [];
    for (let i = 0; i < 8; i++) errors.push(await caught(gateway.payments.create(paymentParams())));
    expect(mock.count('auth')).toBe(5);
    expect(errors.slice(0, 5).every((e) => e.code === 'INVALID_CREDENTIALS')).toBe(true);
    const local = errors[7];
    expect(local).toBeInstanceOf(RateLimitError);
    expect(local?.code).toBe('RATE_LIMITED');
    expect(local?.retryAfter).toBeGreaterThan(0);
    expect(mock.requests.some((r) => r.status === 429)).toBe(false);
    clock += 61_000;
    await caught(gateway.payments.create(paymentParams()));
    expect(mock.count('auth')).toBe(6);
  });

  it('retries the token request on 429 honouring Retry-After', async () => {
    const { gateway, delays } = clientFor(mock, { now });
    mock.fault({ endpoint: 'auth', response: { type: 'rateLimit', retryAfter: 7 } });
    await gateway.payments.create(paymentParams());
    expect(delays).toEqual([7000]);
    expect(mock.count('auth')).toBe(2);
  });

  it('shares tokens through a TokenStore: two clients on one store make one token request', async () => {
    const store = new MemoryTokenStore();
    const a = clientFor(mock, { now, tokenStore: store }).gateway;
    const b = clientFor(mock, { now, tokenStore: store }).gateway;
    await a.payments.create(paymentParams());
    await b.payments.create(paymentParams());
    expect(mock.count('auth')).toBe(1);
  });

  it('accepts the token answer naming variants and assumes 3600 s without a lifetime', async () => {
    const seen: string[] = [];
    const variants = [
      { status: 'success', data: { accessToken: 'tokA', expiresIn: 100 } },
      { token: 'tokB' },
      { status: 'success', data: { access_token: 'tokC', expires_at: new Date(clock + 500_000).toISOString() } },
    ];
    for (const variant of variants) {
      const fetchImpl: typeof fetch = async (input, init) => {
        const request = new Request(input, init);
        if (request.url.endsWith('/auth/token')) return Response.json(variant);
        seen.push(request.headers.get('authorization') ?? '');
        return Response.json({
          status: 'success',
          data: {
            payment_id: 'PAY_1',
            reference_id: 'R1',
            amount: 5,
            currency: 'MYR',
            status: 'PROCESSING',
            created_at: 'x',
          },
        });
      };
      // A store per variant: clients with the same credentials would otherwise share the first token.
      const gateway = new MyrGateway({
        baseUrl: 'https://api.example.test/api/v1',
        merchantId: 'M',
        apiKey: 'k',
        fetch: fetchImpl,
        now,
        tokenStore: new MemoryTokenStore(),
      });
      await gateway.payments.retrieve('R1');
    }
    expect(seen).toEqual(['Bearer tokA', 'Bearer tokB', 'Bearer tokC']);
  });
});
