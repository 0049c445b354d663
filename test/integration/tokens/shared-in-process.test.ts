/**
 * One merchant, one token: clients created per request share the process-wide token cache,
 * the local limiter never locks a client out when the server would answer, and short or
 * skewed token lifetimes still work (issue 7, "Tokens").
 */
import { describe, expect, it, vi } from 'vitest';
import {
  InvalidResponseError,
  MemoryTokenStore,
  MyrGateway,
  type MyrGatewayOptions,
  RateLimitError,
  type TokenStore,
} from '../../../src/index.js';
import { caught, clientFor, paymentParams, recordingSleep, withdrawalParams } from '../../helpers/client.js';
import { clockedMock } from '../../helpers/clocked-mock.js';

const merchants = ['WARN', 'CROWD', 'A', 'B', 'SEEN', 'RENEW'].map((id) => ({
  merchantId: `M_${id}`,
  apiKey: `sk_test_${id.toLowerCase()}_secret`,
}));
// The service counts token requests per IP; this one allows more than 5 a minute, so a
// refusal can only come from the client's own bookkeeping.
const { mock, now, time } = clockedMock({ merchants, rateLimits: { auth: 10 } });

/** A client on the process-wide default store (no tokenStore given), as a merchant writes it. */
function defaultClient(merchantId: string, overrides: Partial<MyrGatewayOptions> = {}) {
  const merchant = merchants.find((m) => m.merchantId === merchantId)!;
  return new MyrGateway({
    baseUrl: mock.baseUrl,
    merchantId,
    apiKey: merchant.apiKey,
    now,
    random: () => 0,
    ...overrides,
  });
}

describe('the process-wide default token store', () => {
  it('warns once per process when many clients are created for one merchant, without the api key', () => {
    const warn = vi.spyOn(console, 'warn').mockImplementation(() => undefined);
    for (let i = 0; i < 60; i++) defaultClient('M_WARN');
    const messages = warn.mock.calls.map((args) => String(args[0]));
    expect(messages.filter((m) => m.includes('clients were created'))).toHaveLength(1);
    expect(messages[0]).toContain('M_WARN');
    expect(messages.join('\n')).not.toContain('sk_test_warn_secret');
  });

  it('100 clients created concurrently for one merchant cause exactly one POST /auth/token and no 429', async () => {
    mock.fault({ endpoint: 'auth', response: { type: 'delay', ms: 30 } });
    const recorder = recordingSleep();
    const results = await Promise.all(
      Array.from({ length: 100 }, () =>
        defaultClient('M_CROWD', { sleep: recorder.sleep }).payments.create(paymentParams()),
      ),
    );
    expect(results).toHaveLength(100);
    expect(mock.count('auth')).toBe(1);
    expect(mock.requests.some((r) => r.status === 429)).toBe(false);
    expect(recorder.delays).toEqual([]);
    // A client created later (past the service's payment-request window) still reuses the token.
    time.clock += 61_000;
    // Not paced: the process-wide budget runs on real time, not on this file's clock.
    await defaultClient('M_CROWD', { rateLimiter: false }).payments.create(paymentParams());
    expect(mock.count('auth')).toBe(1);
  });

  it('clients with other credentials get their own token; store keys are hashes, never the key or token', async () => {
    const keys: string[] = [];
    const inner = new MemoryTokenStore();
    const store: TokenStore = {
      get: (key) => (keys.push(key), inner.get(key)),
      set: (key, token) => inner.set(key, token),
      delete: (key) => inner.delete(key),
    };
    await defaultClient('M_A', { tokenStore: store }).payments.create(paymentParams());
    await defaultClient('M_B', { tokenStore: store }).payments.create(paymentParams());
    await defaultClient('M_A', { tokenStore: store }).payments.create(paymentParams());
    expect(mock.count('auth')).toBe(2);
    const distinct = [...new Set(keys)];
    expect(distinct).toHaveLength(2);
    const tokens = mock.requests
      .filter((r) => r.endpoint !== 'auth')
      .map((r) => String(r.headers.authorization).slice(7));
    for (const key of distinct) {
      expect(key).toMatch(/^myr-gateway:token:[0-9a-f]{64}$/);
      for (const secret of ['sk_test_a_secret', 'sk_test_b_secret', 'M_A', 'M_B', ...tokens])
        expect(key).not.toContain(secret);
    }
  });
});

describe('the local token limiter', () => {
  const refused = () =>
    Object.assign(new TypeError('fetch failed'), {
      cause: Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' }),
    });

  it('does not count token requests that never connected', async () => {
    let down = true;
    const fetchImpl: typeof fetch = (input, init) =>
      down && String(input instanceof Request ? input.url : input).endsWith('/auth/token')
        ? Promise.reject(refused())
        : globalThis.fetch(input, init);
    const { gateway } = clientFor(mock, { now, fetch: fetchImpl, merchantId: 'M_SEEN', apiKey: 'sk_test_seen_secret' });
    for (let i = 0; i < 2; i++)
      expect((await caught(gateway.payments.create(paymentParams()))).code).toBe('NETWORK_ERROR');
    down = false; // 8 refused connections later, the service is back
    const payment = await gateway.payments.create(paymentParams());
    expect(payment.payment_id).toMatch(/^PAY_/);
    expect(mock.count('auth')).toBe(1);
  });

  it('follows the server on 429: retries after its Retry-After, not after its own minute', async () => {
    const { gateway, delays } = clientFor(mock, { now });
    mock.fault({ endpoint: 'auth', times: 5, response: { type: 'rateLimit', retryAfter: 1 } });
    const first = await caught(gateway.payments.create(paymentParams()));
    expect(first).toBeInstanceOf(RateLimitError);
    time.clock += 1_000;
    const payment = await gateway.payments.create(paymentParams()); // one more 429, then the token
    expect(payment.payment_id).toMatch(/^PAY_/);
    expect(mock.count('auth')).toBe(6);
    // Each wait follows the server's Retry-After (never earlier; the retry policy may add backoff on
    // repeated 429s), never the limiter's own 60 s minute.
    expect(delays).toHaveLength(4);
    for (const delay of delays) expect(delay).toBeGreaterThanOrEqual(1000);
    for (const delay of delays) expect(delay).toBeLessThan(60_000);
  });

  it('honours a Retry-After longer than it waits: later calls wait for it locally instead of sending', async () => {
    const { gateway } = clientFor(mock, { now });
    mock.fault({ endpoint: 'auth', times: 1, response: { type: 'rateLimit', retryAfter: 120 } });
    expect((await caught(gateway.payments.create(paymentParams()))).retryAfter).toBe(120);
    time.clock += 30_000;
    const local = await caught(gateway.payments.create(paymentParams()));
    expect(local).toBeInstanceOf(RateLimitError);
    expect(local.retryAfter).toBe(90);
    expect(mock.count('auth')).toBe(1);
    time.clock += 91_000;
    await gateway.payments.create(paymentParams());
    expect(mock.count('auth')).toBe(2);
  });

  it('never blocks a renewal after TOKEN_EXPIRED on its own count', async () => {
    const { gateway, delays } = clientFor(mock, { now, merchantId: 'M_RENEW', apiKey: 'sk_test_renew_secret' });
    await gateway.payments.create(paymentParams());
    for (let i = 0; i < 5; i++) {
      mock.expireTokens(); // the service keeps invalidating tokens (a key rotation, a restart)
      await gateway.payments.create(paymentParams());
    }
    expect(mock.count('auth')).toBe(6);
    expect(delays).toEqual([]);
  });
});

/** A service stub whose token answer the test chooses; counts token requests. */
function stub(tokenBody: () => unknown) {
  const seen = { tokens: 0, calls: [] as string[] };
  const fetchImpl: typeof fetch = async (input, init) => {
    const request = new Request(input, init);
    if (request.url.endsWith('/auth/token')) {
      seen.tokens += 1;
      return Response.json(tokenBody());
    }
    seen.calls.push(request.headers.get('authorization') ?? '');
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
  const gateway = new MyrGateway({
    baseUrl: 'https://api.example.test/api/v1',
    merchantId: 'M',
    apiKey: 'k',
    fetch: fetchImpl,
    now,
    tokenStore: new MemoryTokenStore(),
  });
  return { gateway, seen };
}

describe('token lifetimes', () => {
  it.each([
    ['a lifetime equal to the refresh margin', () => ({ access_token: 'tok1', expires_in: 60 })],
    ['a lifetime below the refresh margin', () => ({ access_token: 'tok1', expires_in: 30 })],
    [
      'an ISO expires_at already past on this time.clock (skew)',
      () => ({ access_token: 'tok1', expires_at: new Date(time.clock - 5_000).toISOString() }),
    ],
    [
      'a Unix expires_at already past on this time.clock (skew)',
      () => ({ access_token: 'tok1', expires_at: Math.floor(time.clock / 1000) - 5 }),
    ],
  ])('a token with %s is still used', async (_label, body) => {
    const { gateway, seen } = stub(body);
    for (let i = 0; i < 10; i++) await gateway.payments.retrieve('R1');
    expect(seen.tokens).toBe(1);
    expect(seen.calls).toHaveLength(10);
  });

  it('an early refresh that fails leaves the call on the token that is still valid', async () => {
    const { gateway } = clientFor(mock, { now, maxRetries: 0 });
    await gateway.payments.create(paymentParams());
    time.clock += 3_600_000 - 30_000; // inside the refresh margin, 30 s before expiry
    mock.fault({ endpoint: 'auth', response: { type: 'status', status: 503, code: 'NO_GATEWAY_AVAILABLE' } });
    const payment = await gateway.payments.create(paymentParams());
    expect(payment.payment_id).toMatch(/^PAY_/);
    expect(mock.requests.map((r) => `${r.endpoint}:${r.status}`)).toEqual([
      'auth:200',
      'payment.create:200',
      'auth:503',
      'payment.create:200',
    ]);
  });

  it('counts a lifetime from when the token was asked for, not from a slow answer', async () => {
    // The token endpoint answers 30 s after issuing; with a 10 s margin, counting from the answer
    // would use the token 20 s past its real expiry.
    const slowAnswer: typeof fetch = async (input, init) => {
      const response = await fetch(input, init);
      if (String(input instanceof Request ? input.url : input).endsWith('/auth/token')) time.clock += 30_000;
      return response;
    };
    const { gateway } = clientFor(mock, { now, fetch: slowAnswer, tokenRefreshMarginMs: 10_000 });
    await gateway.payments.create(paymentParams());
    time.clock += 3_600_000 - 30_000 - 5_000; // 5 s before the real expiry: inside the margin
    await gateway.payments.create(paymentParams());
    time.clock += 10_000; // 5 s after it
    await gateway.payments.create(paymentParams());
    expect(mock.requests.filter((r) => r.status === 401)).toEqual([]);
    expect(mock.count('auth')).toBe(2);
  });

  it('caps an absurd lifetime at a day', async () => {
    const { gateway, seen } = stub(() => ({ access_token: 'tok1', expires_in: 1e12 }));
    await gateway.payments.retrieve('R1');
    time.clock += 25 * 3_600_000;
    await gateway.payments.retrieve('R1');
    expect(seen.tokens).toBe(2);
  });

  it('refuses a token that would break the Authorization header, before sending the withdrawal', async () => {
    const { gateway, seen } = stub(() => ({ access_token: 'tok\r\nX-Injected: 1', expires_in: 3600 }));
    const error = await caught(gateway.withdrawals.create(withdrawalParams()));
    expect(error).toBeInstanceOf(InvalidResponseError);
    expect(error.code).toBe('INVALID_RESPONSE');
    expect(seen.calls).toEqual([]);
  });
});
