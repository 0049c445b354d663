/**
 * src/core/call/attempt.ts on its own: one HTTP exchange and what it means. `sendAttempt` is driven by
 * a scripted fake fetch (never the network); `judgeAttempt` by answers built as
 * the service, its rate limiter or a proxy would send them. What is asserted is what the
 * transport and the token limiter decide on: the kind of ending, whether the request may have
 * been seen, the typed error and the outcome handed to the retry policy, and that the secrets
 * the service may echo back never reach an error message.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import {
  type Attempt,
  attemptReport,
  type Endpoint,
  judgeAttempt,
  sendAttempt,
} from '../../../../src/core/call/attempt.js';
import { ConfigurationError, InvalidRequestError, type MyrGatewayError } from '../../../../src/core/errors/base.js';
import {
  ApiError,
  AuthenticationError,
  ConnectionError,
  DuplicateReferenceError,
  NotFoundError,
  PermissionDeniedError,
  RateLimitError,
  ServiceUnavailableError,
  TimeoutError,
} from '../../../../src/core/errors/service.js';
import { redactSecret } from '../../../../src/core/redact.js';
import { readAnswerTiming } from '../../../../src/core/pacing/rate-limit-headers.js';

const NOW = Date.parse('2026-03-01T10:00:00.000Z');
const API_KEY = 'sk_live_attempt_5f2c9e';
const TOKEN = 'at_attempt.eyJzdWIiOiJNMSJ9.sig';
const judge = { redact: redactSecret(API_KEY) };

/** What the fake fetch was handed. */
interface Sent {
  url: string;
  method: string | undefined;
  headers: Headers;
  body: unknown;
  redirect: RequestRedirect | undefined;
  signal: AbortSignal;
}

/** A fetch that records each request and answers with `answer` (which may throw or hang). */
function scriptedFetch(answer: (sent: Sent) => Response | Promise<Response>) {
  const sent: Sent[] = [];
  const fetch = async (input: RequestInfo | URL, init?: RequestInit): Promise<Response> => {
    if (!init?.signal) throw new Error('the attempt must carry a signal');
    const request: Sent = {
      url: typeof input === 'string' ? input : input instanceof URL ? input.href : input.url,
      method: init.method,
      headers: new Headers(init.headers),
      body: init.body,
      redirect: init.redirect,
      signal: init.signal,
    };
    sent.push(request);
    return answer(request);
  };
  return { sent, fetch };
}

/** An answer that never comes: the fetch rejects only when its signal aborts, as fetch does. */
function hang(sent: Sent): Promise<Response> {
  return new Promise((_resolve, reject) => {
    sent.signal.addEventListener('abort', () => reject(sent.signal.reason), { once: true });
  });
}

/** The error undici throws for a failed connection: a TypeError whose cause carries the system code. */
function fetchFailed(code?: string): TypeError {
  return new TypeError(
    'fetch failed',
    code === undefined ? undefined : { cause: Object.assign(new Error(code), { code }) },
  );
}

function endpoint(fetch: Endpoint['fetch']): Endpoint {
  return { userAgent: 'myr-gateway/test', fetch };
}

const URL_OF = (path: string) => `https://pg.example.com/api/v1/${path}`;
const live = () => new AbortController().signal;

const json = (status: number, body: unknown, headers: Record<string, string> = {}) =>
  new Response(JSON.stringify(body), { status, headers: { 'content-type': 'application/json', ...headers } });

/** An answered attempt, its timing headers read on the client's clock at NOW, as sendAttempt reads them. */
const answered = (response: Response, text: string): Attempt => ({
  kind: 'response',
  response,
  text,
  timing: readAnswerTiming(response.headers, NOW),
});

afterEach(() => {
  vi.useRealTimers();
  vi.unstubAllGlobals();
  vi.restoreAllMocks();
});

describe('sendAttempt', () => {
  it('sends one POST to the URL ky built with the bearer token, JSON headers and the body as given', async () => {
    const { sent, fetch } = scriptedFetch(() => json(201, { status: 'success' }));
    const body = JSON.stringify({ reference_id: 'ORDER1001', amount: 50 });
    const attempt = await sendAttempt(
      endpoint(fetch),
      { url: URL_OF('payment/request'), method: 'POST', body, token: TOKEN },
      live(),
      () => NOW,
    );

    expect(sent).toHaveLength(1);
    const [request] = sent;
    expect(request?.url).toBe('https://pg.example.com/api/v1/payment/request');
    expect(request?.method).toBe('POST');
    expect(request?.body).toBe(body);
    expect(request?.headers.get('authorization')).toBe(`Bearer ${TOKEN}`);
    expect(request?.headers.get('content-type')).toBe('application/json');
    expect(request?.headers.get('accept')).toBe('application/json');
    expect(request?.headers.get('user-agent')).toBe('myr-gateway/test');
    expect(attempt).toMatchObject({ kind: 'response', text: '{"status":"success"}' });
    expect(attempt.kind === 'response' && attempt.response.status).toBe(201);
  });

  it('sends a GET without a token with neither an Authorization nor a Content-Type header, and no body', async () => {
    const { sent, fetch } = scriptedFetch(() => json(200, {}));
    await sendAttempt(
      endpoint(fetch),
      { url: URL_OF('payment/status/ORDER1001'), method: 'GET', body: undefined, token: undefined },
      live(),
      () => NOW,
    );

    expect(sent[0]?.method).toBe('GET');
    expect(sent[0]?.body).toBeNull();
    expect(sent[0]?.headers.has('authorization')).toBe(false);
    expect(sent[0]?.headers.has('content-type')).toBe(false);
  });

  it('never follows a redirect: it would re-send the api key or the token to whatever host the Location names', async () => {
    const { sent, fetch } = scriptedFetch(
      () => new Response(null, { status: 302, headers: { location: 'http://evil.example/' } }),
    );
    const attempt = await sendAttempt(
      endpoint(fetch),
      { url: URL_OF('auth/token'), method: 'POST', body: '{}', token: undefined },
      live(),
      () => NOW,
    );

    expect(sent[0]?.redirect).toBe('manual');
    expect(attempt.kind === 'response' && attempt.response.status).toBe(302);
  });

  it('uses globalThis.fetch, looked up at each request, when the merchant gave no fetch (msw patches it late)', async () => {
    const target = endpoint(undefined);
    const { sent, fetch } = scriptedFetch(() => json(200, { late: true }));
    vi.stubGlobal('fetch', fetch);
    const attempt = await sendAttempt(
      target,
      { url: URL_OF('payment/status/A1'), method: 'GET', body: undefined, token: undefined },
      live(),
      () => NOW,
    );

    expect(sent).toHaveLength(1);
    expect(attempt).toMatchObject({ kind: 'response', text: '{"late":true}' });
  });

  it.each([
    ['ECONNREFUSED', 'connect'],
    ['ENOTFOUND', 'connect'],
    ['DEPTH_ZERO_SELF_SIGNED_CERT', 'handshake'],
    ['ERR_SSL_WRONG_VERSION_NUMBER', 'handshake'],
    ['ECONNRESET', 'exchange'],
    ['UND_ERR_SOCKET', 'exchange'],
    [undefined, 'exchange'],
  ])(
    'reads a connection failure with system code %s as stage %s, keeping the raw error for ky',
    async (code, stage) => {
      const thrown = fetchFailed(code);
      const { fetch } = scriptedFetch(() => {
        throw thrown;
      });
      const attempt = await sendAttempt(
        endpoint(fetch),
        { url: URL_OF('payment/withdraw'), method: 'POST', body: '{}', token: TOKEN },
        live(),
        () => NOW,
      );

      expect(attempt).toEqual({ kind: 'network', systemCode: code, stage, raw: thrown });
    },
  );

  it('reads a body cut off after the headers as a connection failure that may have been processed', async () => {
    const cut = new ReadableStream<Uint8Array>({
      start(controller) {
        controller.enqueue(new TextEncoder().encode('{"status":"succ'));
        controller.error(Object.assign(new Error('other side closed'), { code: 'UND_ERR_SOCKET' }));
      },
    });
    const { fetch } = scriptedFetch(() => new Response(cut, { status: 200 }));
    const attempt = await sendAttempt(
      endpoint(fetch),
      { url: URL_OF('payment/request'), method: 'POST', body: '{}', token: TOKEN },
      live(),
      () => NOW,
    );

    expect(attempt).toMatchObject({ kind: 'network', stage: 'exchange' });
  });

  // Which limit cut it (ky's attempt timeout, the total timeout, the caller) is the transport's
  // to tell: test/unit/core/call/transport.test.ts ('an attempt') and test/unit/core/call/call-errors.test.ts.
  it('hands fetch the signal it was given, and ends as a timeout when that signal aborts', async () => {
    const controller = new AbortController();
    const { sent, fetch } = scriptedFetch(hang);
    const pending = sendAttempt(
      endpoint(fetch),
      { url: URL_OF('payment/status/A1'), method: 'GET', body: undefined, token: TOKEN },
      controller.signal,
      () => NOW,
    );
    await Promise.resolve();
    const reason = new Error('the customer closed the page');
    controller.abort(reason);

    await expect(pending).resolves.toEqual({ kind: 'timeout' });
    expect(sent[0]?.signal).toBe(controller.signal);
    expect(sent[0]?.signal.reason).toBe(reason);
  });
});

describe('attemptReport (what the token limiter counts)', () => {
  it.each<[string, Attempt, object]>([
    ['a timeout may have been seen', { kind: 'timeout' }, { sent: true }],
    [
      'a refused connection was not',
      { kind: 'network', systemCode: 'ECONNREFUSED', stage: 'connect' },
      { sent: false },
    ],
    [
      'a refused TLS handshake was not',
      { kind: 'network', systemCode: 'ERR_SSL_WRONG_VERSION_NUMBER', stage: 'handshake' },
      { sent: false },
    ],
    [
      'a reset connection may have been',
      { kind: 'network', systemCode: 'ECONNRESET', stage: 'exchange' },
      { sent: true },
    ],
    [
      'an answer was, with its status',
      answered(json(200, {}, { 'retry-after': '30' }), '{}'),
      { sent: true, status: 200, retryAfterMs: undefined },
    ],
    [
      'a 429 carries its Retry-After in ms',
      answered(json(429, {}, { 'retry-after': '30' }), '{}'),
      { sent: true, status: 429, retryAfterMs: 30_000 },
    ],
    [
      'a 429 without Retry-After has no wait',
      answered(json(429, {}), '{}'),
      { sent: true, status: 429, retryAfterMs: undefined },
    ],
  ])('%s', (_name, attempt, report) => {
    expect(attemptReport(attempt)).toEqual(report);
  });

  it("reads a Retry-After HTTP date against the client's clock", () => {
    const attempt = answered(json(429, {}, { 'retry-after': 'Sun, 01 Mar 2026 10:00:45 GMT' }), '{}');
    expect(attemptReport(attempt).retryAfterMs).toBe(45_000);
  });
});

describe('judgeAttempt', () => {
  it('hands on the parsed JSON body and the status of a 2xx answer, with its rate-limit headers seen now', () => {
    const body = { status: 'success', data: { payment_id: 'P1' } };
    const response = json(201, body, {
      'x-ratelimit-limit': '100',
      'x-ratelimit-remaining': '97',
      'x-ratelimit-reset': '1772359260',
    });
    const judged = judgeAttempt(answered(response, JSON.stringify(body)), 30_000, TOKEN, judge);

    expect(judged).toEqual({
      ok: true,
      data: body,
      status: 201,
      rateLimit: { limit: 100, remaining: 97, reset: 1772359260, observedAt: NOW },
    });
  });

  it("hands on a 2xx body that is not JSON as text, for the resource's envelope check to report", () => {
    const judged = judgeAttempt(answered(new Response('OK', { status: 200 }), 'OK'), 30_000, TOKEN, judge);
    expect(judged).toEqual({ ok: true, data: 'OK', status: 200, rateLimit: undefined });
  });

  it('turns a timed-out attempt into a retryable TimeoutError naming the attempt timeout, with a timeout outcome', () => {
    const judged = judgeAttempt({ kind: 'timeout' }, 7000, TOKEN, judge);

    expect(judged.ok).toBe(false);
    if (judged.ok) return;
    expect(judged.outcome).toEqual({ kind: 'timeout' });
    expect(judged.error).toBeInstanceOf(TimeoutError);
    expect(judged.error).toMatchObject({ code: 'TIMEOUT', retryable: true });
    expect(judged.error.message).toContain('7000 ms');
  });

  it.each([
    ['connect', true, /could not be made; nothing was sent/],
    ['handshake', false, /nothing was sent; check the scheme, host and certificate/],
    ['exchange', true, /may have been sent/],
  ] as const)(
    'turns a connection failure at stage %s into a ConnectionError (retryable: %s) with that network outcome',
    (stage, retryable, message) => {
      const judged = judgeAttempt({ kind: 'network', systemCode: 'ECONNX', stage }, 30_000, TOKEN, judge);

      expect(judged.ok).toBe(false);
      if (judged.ok) return;
      expect(judged.outcome).toEqual({ kind: 'network', stage });
      expect(judged.error).toBeInstanceOf(ConnectionError);
      expect(judged.error).toMatchObject({ code: 'NETWORK_ERROR', retryable });
      expect(judged.error.message).toMatch(message);
      expect(judged.error.message).toContain('ECONNX');
    },
  );

  const envelope = (error: string, message = 'refused') => ({ status: 'error', error, message });
  it.each<[number, unknown, abstract new (...args: never[]) => MyrGatewayError, string, boolean]>([
    [400, envelope('VALIDATION_ERROR'), InvalidRequestError, 'VALIDATION_ERROR', false],
    [400, envelope('INVALID_AMOUNT'), InvalidRequestError, 'INVALID_AMOUNT', false],
    [400, envelope('INVALID_BANK_CODE'), InvalidRequestError, 'INVALID_BANK_CODE', false],
    [401, envelope('TOKEN_EXPIRED'), AuthenticationError, 'TOKEN_EXPIRED', true],
    [401, envelope('UNAUTHORIZED'), AuthenticationError, 'UNAUTHORIZED', false],
    [401, envelope('INVALID_CREDENTIALS'), AuthenticationError, 'INVALID_CREDENTIALS', false],
    [403, envelope('MERCHANT_LOCKED'), PermissionDeniedError, 'MERCHANT_LOCKED', false],
    [404, envelope('NOT_FOUND'), NotFoundError, 'NOT_FOUND', false],
    [409, envelope('DUPLICATE_REFERENCE'), DuplicateReferenceError, 'DUPLICATE_REFERENCE', false],
    [422, { status: 'error', message: 'callback_url must use https' }, InvalidRequestError, 'HTTP_ERROR', false],
    [429, envelope('RATE_LIMITED'), RateLimitError, 'RATE_LIMITED', true],
    // The rate limiter's own body: `error` is prose, not a code.
    [
      429,
      { statusCode: 429, message: 'Too Many Requests', error: 'Too Many Requests', path: '/payment/request' },
      RateLimitError,
      'RATE_LIMITED',
      true,
    ],
    [502, envelope('GATEWAY_ERROR'), ServiceUnavailableError, 'GATEWAY_ERROR', true],
    [503, envelope('NO_GATEWAY_AVAILABLE'), ServiceUnavailableError, 'NO_GATEWAY_AVAILABLE', true],
    [504, envelope('GATEWAY_TIMEOUT'), ServiceUnavailableError, 'GATEWAY_TIMEOUT', true],
    [418, envelope('TEAPOT'), ApiError, 'TEAPOT', false],
  ])(
    'maps HTTP %i %j to its typed error and an http outcome with the same code',
    (status, body, type, code, retryable) => {
      const text = JSON.stringify(body);
      const judged = judgeAttempt(answered(json(status, body), text), 30_000, TOKEN, judge);

      expect(judged.ok).toBe(false);
      if (judged.ok) return;
      expect(judged.error).toBeInstanceOf(type);
      expect(judged.error).toMatchObject({ code, status, retryable });
      expect(judged.outcome).toEqual({ kind: 'http', status, code, retryAfterMs: undefined, resetInMs: undefined });
    },
  );

  it('says an HTML error page from a proxy is one, rather than echoing the page', () => {
    const page = '<html><body><h1>502 Bad Gateway</h1></body></html>';
    const judged = judgeAttempt(answered(new Response(page, { status: 502 }), page), 30_000, TOKEN, judge);

    expect(judged.ok).toBe(false);
    if (judged.ok) return;
    expect(judged.error).toBeInstanceOf(ServiceUnavailableError);
    expect(judged.error.code).toBe('HTTP_ERROR');
    expect(judged.error.message).toContain('non-JSON (HTML) error page');
    expect(judged.error.message).not.toContain('<h1>');
  });

  it('turns a redirect into an error that names baseUrl, since it was not followed', () => {
    const response = new Response(null, {
      status: 301,
      headers: { location: 'https://elsewhere.example/api/v1/auth/token' },
    });
    const judged = judgeAttempt(answered(response, ''), 30_000, undefined, judge);

    expect(judged.ok).toBe(false);
    if (judged.ok) return;
    expect(judged.error.status).toBe(301);
    expect(judged.error.retryable).toBe(false);
    expect(judged.error.message).toMatch(/redirect.*baseUrl/);
  });

  it('reads a 404 without the service error body as a wrong baseUrl, not as "payment not found"', () => {
    const judged = judgeAttempt(
      answered(new Response('Not Found', { status: 404 }), 'Not Found'),
      30_000,
      TOKEN,
      judge,
    );

    expect(judged.ok).toBe(false);
    if (judged.ok) return;
    expect(judged.error).toBeInstanceOf(ConfigurationError);
    expect(judged.error.field).toBe('baseUrl');
  });

  it("gives the policy a 429's Retry-After in ms and puts it on the error in seconds", () => {
    const response = json(429, envelope('RATE_LIMITED'), { 'retry-after': '30' });
    const judged = judgeAttempt(answered(response, JSON.stringify(envelope('RATE_LIMITED'))), 30_000, TOKEN, judge);

    expect(judged.ok).toBe(false);
    if (judged.ok) return;
    expect(judged.error.retryAfter).toBe(30);
    expect(judged.outcome).toMatchObject({ kind: 'http', status: 429, retryAfterMs: 30_000 });
  });

  // The policy waits at least what it is given (retry-policy.test.ts), so it needs the exact value, not
  // one that went through whole seconds; the error tells the merchant whole seconds, rounded up.
  it('hands the policy a fractional Retry-After exactly, and the error its whole seconds rounded up', () => {
    const response = json(429, envelope('RATE_LIMITED'), { 'retry-after': '1.2' });
    const judged = judgeAttempt(answered(response, '{}'), 30_000, TOKEN, judge);

    expect(judged.ok).toBe(false);
    if (judged.ok) return;
    expect(judged.outcome).toMatchObject({ retryAfterMs: 1200 });
    expect(judged.error.retryAfter).toBe(2);
  });

  it("gives the policy the time until X-RateLimit-Reset on the client's clock, and keeps the headers", () => {
    const reset = NOW / 1000 + 12;
    const response = json(429, envelope('RATE_LIMITED'), {
      'x-ratelimit-limit': '100',
      'x-ratelimit-remaining': '0',
      'x-ratelimit-reset': String(reset),
    });
    const judged = judgeAttempt(answered(response, '{}'), 30_000, TOKEN, judge);

    expect(judged.ok).toBe(false);
    if (judged.ok) return;
    expect(judged.outcome).toMatchObject({ kind: 'http', status: 429, retryAfterMs: undefined, resetInMs: 12_000 });
    expect(judged.rateLimit).toEqual({ limit: 100, remaining: 0, reset, observedAt: NOW });
  });

  it('takes the correlation id from the error body, or else from the X-Correlation-Id header', () => {
    const fromBody = {
      status: 'error',
      error: 'GATEWAY_ERROR',
      message: 'bank limit reached',
      correlation_id: 'corr-body',
    };
    const a = judgeAttempt(
      answered(json(502, fromBody, { 'x-correlation-id': 'corr-header' }), JSON.stringify(fromBody)),
      30_000,
      TOKEN,
      judge,
    );
    const b = judgeAttempt(
      answered(
        json(502, envelope('GATEWAY_ERROR'), { 'x-correlation-id': 'corr-header' }),
        JSON.stringify(envelope('GATEWAY_ERROR')),
      ),
      30_000,
      TOKEN,
      judge,
    );

    expect(a.ok || a.error.correlationId).toBe('corr-body');
    expect(b.ok || b.error.correlationId).toBe('corr-header');
  });

  it('strips the api key and the access token the service echoed in its message from the error', () => {
    const body = envelope('UNAUTHORIZED', `token ${TOKEN} is not valid for api_key ${API_KEY}`);
    const judged = judgeAttempt(answered(json(401, body), JSON.stringify(body)), 30_000, TOKEN, judge);

    expect(judged.ok).toBe(false);
    if (judged.ok) return;
    const everything = [judged.error.message, judged.error.stack, JSON.stringify(judged.error)].join('\n');
    expect(everything).not.toContain(API_KEY);
    expect(everything).not.toContain(TOKEN);
    expect(judged.error.message).toContain('[redacted]');
  });

  it("keeps the client's redaction of the api key for a request that carried no token", () => {
    const body = envelope('INVALID_CREDENTIALS', `unknown api_key ${API_KEY}`);
    const judged = judgeAttempt(answered(json(401, body), JSON.stringify(body)), 30_000, undefined, judge);

    expect(judged.ok).toBe(false);
    if (judged.ok) return;
    expect(judged.error.message).not.toContain(API_KEY);
    expect(judged.error.message).toBe('INVALID_CREDENTIALS (HTTP 401): unknown api_key [redacted]');
  });
});
