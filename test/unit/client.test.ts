/**
 * src/client.ts, the composition root: every option is checked when the client is built,
 * before anything can reach the network (a ConfigurationError naming the option); per-call
 * options are checked before anything is sent (an InvalidRequestError); missing settings fail
 * each call until they appear, never the construction; the options reach the transport (the
 * merchant's fetch, sleep, random, clock, retries); and the api key shows nowhere but in the
 * body of the token request: not in util.inspect, JSON.stringify, errors or log lines.
 * A scripted `fetch` records every request; pacing is off and every client has its own token cache.
 */
import { inspect } from 'node:util';
import { afterEach, describe, expect, it, vi } from 'vitest';
import {
  ApiError,
  AuthenticationError,
  ConfigurationError,
  InvalidRequestError,
  MemoryTokenStore,
  MyrGateway,
  ServiceUnavailableError,
  VERSION,
  type MyrGatewayOptions,
  type PaymentCreateParams,
  type WithdrawalCreateParams,
} from '../../src/index.js';
import { API_KEY, BASE, NOW, failure, gatewayOptions, scriptedFetch, success } from '../helpers/scripted-fetch.js';
import { caught } from '../helpers/client.js';

const ACCESS_TOKEN = 'at_client_Zp3kV8nLq6sD1f';
/** The token answer of this file's scripted fetches: ACCESS_TOKEN, whichever token request it is. */
const issued = () => success({ access_token: ACCESS_TOKEN, expires_in: 3600 });

afterEach(() => {
  vi.unstubAllEnvs();
  vi.unstubAllGlobals();
});

const record = (over: Record<string, unknown> = {}) => ({
  payment_id: 'PAY_1',
  reference_id: 'ORDER1',
  amount: 120.5,
  currency: 'MYR',
  status: 'PROCESSING',
  created_at: new Date(NOW).toISOString(),
  ...over,
});

const payment = {
  amount: 120.5,
  reference_id: 'ORDER1',
  customer_name: 'Aisyah Rahman',
  customer_phone: '60123456789',
  payment_method: 'QR_PAYMENT',
} as PaymentCreateParams;
const withdrawal = {
  amount: 250,
  reference_id: 'PAYOUT1',
  bank_code: 'PBBEMYKL',
  account_number: '5140123456789',
  account_name: 'Tan Wei Ming',
} as WithdrawalCreateParams;

describe('new MyrGateway: options are checked before any network call', () => {
  const notALogger = { debug() {}, info() {}, warn() {} };
  it.each<[string, Record<string, unknown>, string | undefined]>([
    ['baseUrl over http://', { baseUrl: 'http://gw.test/api/v1' }, 'baseUrl'],
    [
      'a loopback http:// baseUrl without allowInsecureLoopback',
      { baseUrl: 'http://127.0.0.1:4010/api/v1' },
      'baseUrl',
    ],
    ['a baseUrl with another scheme', { baseUrl: 'ftp://gw.test/api/v1' }, 'baseUrl'],
    ['a relative baseUrl', { baseUrl: 'gw.test/api/v1' }, 'baseUrl'],
    ['a baseUrl with credentials', { baseUrl: `https://merchant:${API_KEY}@gw.test/api/v1` }, 'baseUrl'],
    ['a baseUrl with a query', { baseUrl: 'https://gw.test/api/v1?env=live' }, 'baseUrl'],
    ['a baseUrl with a fragment', { baseUrl: 'https://gw.test/api/v1#x' }, 'baseUrl'],
    ['a baseUrl with a space', { baseUrl: 'https://gw.test/api v1' }, 'baseUrl'],
    ['a baseUrl that is no string', { baseUrl: new URL('https://gw.test') }, 'baseUrl'],
    ['a merchantId that is no string', { merchantId: 42 }, 'merchantId'],
    ['an apiKey that is no string', { apiKey: { key: API_KEY } }, 'apiKey'],
    ['timeout 0', { timeout: 0 }, 'timeout'],
    ['a fractional timeout', { timeout: 1.5 }, 'timeout'],
    ['a timeout beyond a timer', { timeout: 2 ** 31 }, 'timeout'],
    ['a NaN totalTimeout', { totalTimeout: Number.NaN }, 'totalTimeout'],
    ['a negative totalTimeout', { totalTimeout: -1 }, 'totalTimeout'],
    ['tokenStoreTimeout 0', { tokenStoreTimeout: 0 }, 'tokenStoreTimeout'],
    ['a negative tokenRefreshMarginMs', { tokenRefreshMarginMs: -1 }, 'tokenRefreshMarginMs'],
    ['maxRetries above 10', { maxRetries: 11 }, 'maxRetries'],
    ['a negative maxRetries', { maxRetries: -1 }, 'maxRetries'],
    ['a fractional maxRetries', { maxRetries: 1.5 }, 'maxRetries'],
    ['a NaN retry.baseDelayMs', { retry: { baseDelayMs: Number.NaN } }, 'baseDelayMs'],
    ['retry.maxDelayMs 0', { retry: { maxDelayMs: 0 } }, 'maxDelayMs'],
    ['a logger without error()', { logger: notALogger }, 'logger'],
    ['an unknown logLevel', { logLevel: 'verbose' }, 'logLevel'],
    ['an onRequest that is no function', { onRequest: 'log' }, 'onRequest'],
    ['an onRetry that is no function', { onRetry: {} }, 'onRetry'],
    ['a tracer without startActiveSpan', { tracer: {} }, 'tracer'],
    ['a rateLimiter without observe()', { rateLimiter: { acquire: async () => undefined } }, 'rateLimiter'],
  ])('refuses %s with a ConfigurationError naming it, at construction', (_label, over, field) => {
    const fake = scriptedFetch();
    let error: unknown;
    try {
      new MyrGateway({ ...gatewayOptions(fake.fetch), ...over });
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(ConfigurationError);
    expect(error).toMatchObject({ code: 'INVALID_CONFIGURATION', field });
    expect(String((error as Error).message)).not.toContain(API_KEY);
    expect(fake.fetch).not.toHaveBeenCalled();
  });

  // BUG (src/client.ts:111): `fetch` is the one function-valued option not checked, unlike
  // onRequest/logger/tracer/rateLimiter. A proxy URL passed by mistake builds a client whose every
  // call fails later as a ConnectionError claiming the request "may have been sent", which is
  // false: nothing ever left.
  it('takes null for fetch, sleep, random and now as not given (a configuration spread), as before', () => {
    const nulls = { fetch: null, sleep: null, random: null, now: null } as unknown as Partial<MyrGatewayOptions>;
    expect(() => new MyrGateway({ ...gatewayOptions(undefined), ...nulls })).not.toThrow();
  });

  it('refuses a fetch option that is not a function (a proxy URL passed by mistake) at construction', () => {
    const build = () =>
      new MyrGateway(gatewayOptions('https://proxy.internal:3128' as unknown as typeof globalThis.fetch));
    expect(build).toThrow(ConfigurationError);
    expect(build).toThrow(expect.objectContaining({ field: 'fetch' }));
  });

  it.each(['sleep', 'random', 'now'])(
    'refuses a %s option that is not a function at construction, naming it',
    (name) => {
      const fake = scriptedFetch();
      const build = () => new MyrGateway({ ...gatewayOptions(fake.fetch), [name]: 1000 });
      expect(build).toThrow(ConfigurationError);
      expect(build).toThrow(expect.objectContaining({ field: name }));
      expect(fake.sent).toHaveLength(0);
    },
  );

  it.each([null, 'https://gw.test', 42])('refuses options that are not an object (%j)', (value) => {
    expect(() => new MyrGateway(value as unknown as MyrGatewayOptions)).toThrow(ConfigurationError);
  });

  it('refuses a wrong value read from the environment at construction, saying where it came from', () => {
    vi.stubEnv('MYR_GATEWAY_BASE_URL', 'http://gw.test/api/v1');
    const fake = scriptedFetch();
    const build = () => new MyrGateway({ merchantId: 'M1', apiKey: API_KEY, fetch: fake.fetch });
    expect(build).toThrow(ConfigurationError);
    expect(build).toThrow('baseUrl (from MYR_GATEWAY_BASE_URL) must use https://');
    expect(fake.fetch).not.toHaveBeenCalled();
  });

  it('accepts the edges of each range: margin 0, no retries, no backoff, a loopback http baseUrl when allowed', async () => {
    const fake = scriptedFetch([success(record())], issued);
    const client = new MyrGateway(
      gatewayOptions(fake.fetch, {
        baseUrl: 'http://localhost:4010/api/v1',
        allowInsecureLoopback: true,
        tokenRefreshMarginMs: 0,
        maxRetries: 0,
        retry: { baseDelayMs: 0, jitterMs: 0 },
        totalTimeout: 2 ** 31 - 1,
      }),
    );
    await client.payments.retrieve('ORDER1');
    expect(() => new MyrGateway(gatewayOptions(fake.fetch, { timeout: 1, tokenStoreTimeout: 1 }))).not.toThrow();
    expect(fake.sent.map((r) => r.url)).toEqual([
      'http://localhost:4010/api/v1/auth/token',
      'http://localhost:4010/api/v1/payment/status/ORDER1',
    ]);
  });
});

describe('MyrGateway: per-call options are checked before anything is sent', () => {
  it.each<[string, Record<string, unknown>, string]>([
    ['timeout 0', { timeout: 0 }, 'timeout'],
    ['a fractional timeout', { timeout: 2.5 }, 'timeout'],
    ['a negative totalTimeout', { totalTimeout: -1 }, 'totalTimeout'],
    ['a totalTimeout beyond a timer', { totalTimeout: 2 ** 31 }, 'totalTimeout'],
    ['maxRetries above 10', { maxRetries: 11 }, 'maxRetries'],
    ['a negative maxRetries', { maxRetries: -1 }, 'maxRetries'],
    ['a signal that is no AbortSignal', { signal: 'stop' }, 'signal'],
    ['a signal-like object', { signal: { aborted: false } }, 'signal'],
  ])(
    '%s is an InvalidRequestError for every method, and nothing is fetched (not even a token)',
    async (_label, callOptions, field) => {
      const fake = scriptedFetch();
      const client = new MyrGateway(gatewayOptions(fake.fetch));
      const calls = [
        client.payments.retrieve('ORDER1', callOptions),
        client.payments.create(payment, callOptions),
        client.withdrawals.create(withdrawal, callOptions),
        client.withdrawals.recover(withdrawal, callOptions),
      ];
      for (const call of calls) {
        const error = await caught(call);
        expect(error).toBeInstanceOf(InvalidRequestError);
        expect(error).toMatchObject({ code: 'VALIDATION_ERROR', field });
      }
      expect(fake.fetch).not.toHaveBeenCalled();
    },
  );
});

describe('MyrGateway: settings missing at construction', () => {
  function unset() {
    for (const name of ['MYR_GATEWAY_BASE_URL', 'MYR_GATEWAY_MERCHANT_ID', 'MYR_GATEWAY_API_KEY']) vi.stubEnv(name, '');
  }

  it('builds without them, and every call fails with a ConfigurationError naming what is missing; nothing is sent', async () => {
    unset();
    const fake = scriptedFetch();
    const client = new MyrGateway({
      baseUrl: BASE,
      fetch: fake.fetch,
      tokenStore: new MemoryTokenStore(),
      rateLimiter: false,
    });
    const calls = [
      client.payments.retrieve('ORDER1'),
      client.payments.create(payment),
      client.payments.waitForCompletion('ORDER1', { timeoutMs: 60_000 }),
      client.withdrawals.create(withdrawal),
      client.withdrawals.recover(withdrawal),
    ];
    for (const call of calls) {
      const error = await caught(call);
      expect(error).toBeInstanceOf(ConfigurationError);
      expect(error.field).toBe('merchantId');
      expect(error.message).toContain('merchantId is missing (pass { merchantId } or set MYR_GATEWAY_MERCHANT_ID)');
      expect(error.message).toContain('apiKey is missing (pass { apiKey } or set MYR_GATEWAY_API_KEY)');
      expect(error.message).toContain('Nothing was sent.');
    }
    expect(fake.fetch).not.toHaveBeenCalled();
    expect(client.rateLimit).toBeUndefined();
  });

  it('reads them again at the next call, and connects once they are there', async () => {
    unset();
    const fake = scriptedFetch([success(record())], issued);
    const client = new MyrGateway({
      baseUrl: BASE,
      fetch: fake.fetch,
      tokenStore: new MemoryTokenStore(),
      rateLimiter: false,
    });
    expect(await caught(client.payments.retrieve('ORDER1'))).toBeInstanceOf(ConfigurationError);
    vi.stubEnv('MYR_GATEWAY_MERCHANT_ID', 'M_FROM_ENV');
    vi.stubEnv('MYR_GATEWAY_API_KEY', API_KEY);
    await expect(client.payments.retrieve('ORDER1')).resolves.toMatchObject({ payment_id: 'PAY_1' });
    expect(JSON.parse(fake.sent[0]?.text ?? '{}')).toEqual({ merchant_id: 'M_FROM_ENV', api_key: API_KEY });
    expect(client.toJSON()).toEqual({ baseUrl: `${BASE}/`, merchantId: 'M_FROM_ENV' });
  });
});

describe('MyrGateway: what reaches the fetch', () => {
  it('calls the fetch option with the URL and an init: method, JSON headers, its User-Agent, a signal, no redirects followed', async () => {
    const fake = scriptedFetch([success(record())], issued);
    const client = new MyrGateway(gatewayOptions(fake.fetch));
    await client.payments.retrieve('ORDER1');
    const [token, lookup] = fake.sent;
    expect(token?.url).toBe(`${BASE}/auth/token`);
    expect(token?.init).toMatchObject({
      method: 'POST',
      redirect: 'manual',
      headers: { 'content-type': 'application/json', 'user-agent': `myr-gateway/${VERSION}` },
    });
    expect(lookup?.url).toBe(`${BASE}/payment/status/ORDER1`);
    expect(lookup?.init).toMatchObject({
      method: 'GET',
      body: null,
      redirect: 'manual',
      headers: { accept: 'application/json', authorization: `Bearer ${ACCESS_TOKEN}` },
    });
    expect(lookup?.init.signal).toBeInstanceOf(AbortSignal);
  });

  it.each([`${BASE}/api/v1`, `${BASE}/api/v1/`])(
    'joins the paths below the base URL %s with exactly one slash',
    async (baseUrl) => {
      const fake = scriptedFetch([success(record())], issued);
      await new MyrGateway(gatewayOptions(fake.fetch, { baseUrl })).payments.retrieve('ORDER1');
      expect(fake.sent.map((r) => r.url)).toEqual([
        `${BASE}/api/v1/auth/token`,
        `${BASE}/api/v1/payment/status/ORDER1`,
      ]);
    },
  );

  it('without a fetch option, looks up globalThis.fetch per request (one patched after construction is used)', async () => {
    const client = new MyrGateway(gatewayOptions(undefined));
    const fake = scriptedFetch([success(record())], issued);
    vi.stubGlobal('fetch', fake.fetch);
    await expect(client.payments.retrieve('ORDER1')).resolves.toMatchObject({ payment_id: 'PAY_1' });
    expect(fake.fetch).toHaveBeenCalledTimes(2);
  });

  it('does not follow a redirect: the 3xx is an error telling to check baseUrl, and its Location gets nothing', async () => {
    const fake = scriptedFetch(
      [new Response(null, { status: 302, headers: { location: 'http://elsewhere.test/steal' } })],
      issued,
    );
    const client = new MyrGateway(gatewayOptions(fake.fetch));
    const error = await caught(client.payments.retrieve('ORDER1'));
    expect(error).toBeInstanceOf(ApiError);
    expect(error.message).toContain('a redirect, which the SDK does not follow');
    expect(fake.sent.every((r) => r.url.startsWith(BASE))).toBe(true);
  });

  it('backs off with its sleep, spreads with its random and stops after maxRetries, as configured', async () => {
    const delays: number[] = [];
    const fake = scriptedFetch(
      [
        failure(503, 'NO_GATEWAY_AVAILABLE'),
        failure(503, 'NO_GATEWAY_AVAILABLE'),
        failure(503, 'NO_GATEWAY_AVAILABLE'),
      ],
      issued,
    );
    const client = new MyrGateway(
      gatewayOptions(fake.fetch, {
        maxRetries: 2,
        retry: { baseDelayMs: 100, jitterMs: 40 },
        random: () => 0.5,
        sleep: async (ms) => void delays.push(ms),
      }),
    );
    expect(await caught(client.payments.retrieve('ORDER1'))).toBeInstanceOf(ServiceUnavailableError);
    // 100 × 2^(n-1) plus half of the 40 ms jitter.
    expect(delays).toEqual([120, 220]);
    expect(fake.sent.filter((r) => r.url.endsWith('/payment/status/ORDER1'))).toHaveLength(3);
  });

  it('exposes the last X-RateLimit-* headers it saw, stamped with its clock; none before the first answer', async () => {
    const fake = scriptedFetch(
      [
        success(record(), 200, {
          'x-ratelimit-limit': '100',
          'x-ratelimit-remaining': '42',
          'x-ratelimit-reset': '1795507260',
        }),
      ],
      issued,
    );
    const client = new MyrGateway(gatewayOptions(fake.fetch));
    expect(client.rateLimit).toBeUndefined();
    await client.payments.retrieve('ORDER1');
    expect(client.rateLimit).toEqual({ limit: 100, remaining: 42, reset: 1_795_507_260, observedAt: NOW });
  });
});

describe('MyrGateway: the api key never shows', () => {
  it('util.inspect and JSON.stringify show the base URL and merchant id, never the api key', () => {
    const client = new MyrGateway(gatewayOptions(scriptedFetch().fetch, { merchantId: 'M_SHOWN' }));
    expect(client.toJSON()).toEqual({ baseUrl: `${BASE}/`, merchantId: 'M_SHOWN' });
    expect(inspect(client)).toBe(`MyrGateway {"baseUrl":"${BASE}/","merchantId":"M_SHOWN"}`);
    const views = [
      inspect(client),
      inspect(client, { showHidden: true, depth: null, getters: true }),
      inspect(client, { customInspect: false, showHidden: true, depth: null }),
      inspect({ nested: { client } }, { depth: null }),
      JSON.stringify(client),
      JSON.stringify({ client }),
    ];
    for (const view of views) expect(view).not.toContain(API_KEY);
  });

  it('sends the api key only in the body of the token request: no header, no URL, no other body', async () => {
    const fake = scriptedFetch(
      [success(record()), success({ payment_id: 'PAY_1', payment_url: 'https://pay.gw.test/p/1' })],
      issued,
    );
    const client = new MyrGateway(gatewayOptions(fake.fetch));
    await client.payments.retrieve('ORDER1');
    await client.payments.create(payment);
    const [token, ...rest] = fake.sent;
    expect(token?.text).toContain(API_KEY);
    expect(JSON.stringify(token?.init.headers)).not.toContain(API_KEY);
    for (const request of rest) {
      expect(request.url).not.toContain(API_KEY);
      expect(JSON.stringify(request.init.headers)).not.toContain(API_KEY);
      expect(request.text ?? '').not.toContain(API_KEY);
    }
  });

  it('an error whose message echoes the api key or the access token shows neither, in its message, JSON or inspect', async () => {
    const fake = scriptedFetch([failure(400, 'VALIDATION_ERROR', `token ${ACCESS_TOKEN} may not do this`)], issued);
    const client = new MyrGateway(gatewayOptions(fake.fetch));
    const refused = await caught(client.payments.retrieve('ORDER1'));
    const badKey = await caught(
      new MyrGateway(
        gatewayOptions(
          scriptedFetch([], () => failure(401, 'INVALID_CREDENTIALS', `api_key ${API_KEY} is not valid`)).fetch,
        ),
      ).payments.retrieve('ORDER1'),
    );
    expect(badKey).toBeInstanceOf(AuthenticationError);
    expect(badKey.message).toContain('api_key [redacted] is not valid');
    expect(refused.message).toContain('token [redacted] may not');
    for (const error of [refused, badKey]) {
      for (const view of [error.message, JSON.stringify(error), inspect(error, { depth: null, showHidden: true })]) {
        expect(view).not.toContain(API_KEY);
        expect(view).not.toContain(ACCESS_TOKEN);
      }
    }
  });

  it('no log line or hook event at any level carries the api key or the access token', async () => {
    const lines: string[] = [];
    const keep = (...args: unknown[]) => void lines.push(JSON.stringify(args));
    const events: string[] = [];
    const fake = scriptedFetch([failure(502, 'GATEWAY_ERROR', `upstream saw ${API_KEY}`), success(record())], issued);
    const client = new MyrGateway(
      gatewayOptions(fake.fetch, {
        logger: { debug: keep, info: keep, warn: keep, error: keep },
        logLevel: 'debug',
        onRequest: (e) => void events.push(JSON.stringify(e)),
        onResponse: (e) => void events.push(JSON.stringify(e)),
        onRetry: (e) => void events.push(JSON.stringify(e)),
      }),
    );
    await client.payments.retrieve('ORDER1');
    // The log and the hooks did see the calls: token, failed lookup, retried lookup.
    expect(lines.length).toBeGreaterThanOrEqual(3);
    expect(events.length).toBeGreaterThanOrEqual(5);
    for (const text of [...lines, ...events]) {
      expect(text).not.toContain(API_KEY);
      expect(text).not.toContain(ACCESS_TOKEN);
    }
  });
});
