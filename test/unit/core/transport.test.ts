/**
 * src/core/transport.ts on its own: the call loop, wired as src/client.ts wires it (a real
 * TokenManager on a store of its own, the client's redaction of the api key, an Observer), but
 * with a scripted fake fetch instead of the network, an injected clock and an injected sleep
 * that records each backoff. Asserted: what a successful call returns and the metadata it
 * reports, which failures are sent again and which are not, that a money-moving request that
 * may have been processed is never sent again blindly (and that the failure says so), timeouts
 * and aborts, the typed errors, and that neither the api key nor an access token reaches a
 * thrown error or a log line.
 */
import { inspect } from 'node:util';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { resolveRetryOptions, type RetryOptions } from '../../../src/core/retry-options.js';
import { wait as abortableSleep } from '../../../src/core/wait.js';
import { type CallSpec, Transport, type TransportConfig } from '../../../src/core/transport.js';
import { MemoryTokenStore, TokenManager } from '../../../src/core/tokens/manager.js';
import { tokenSeal } from '../../../src/core/tokens/seal.js';
import { readToken } from '../../../src/core/tokens/answer.js';
import type { TokenAttemptReport } from '../../../src/core/tokens/shared.js';
import { Observer } from '../../../src/core/observe/observer.js';
import { Pacer } from '../../../src/core/pacing/pacer.js';
import type { RateBucket, RateLimiter, RateLimitObservation } from '../../../src/core/pacing/limiter.js';
import { accountNumberRedactor, redactSecret } from '../../../src/core/redact.js';
import { InvalidRequestError, MyrGatewayError } from '../../../src/core/errors/base.js';
import { OutcomeUnknownError } from '../../../src/core/errors/outcome.js';
import {
  AbortError,
  AuthenticationError,
  ConnectionError,
  DuplicateReferenceError,
  NotFoundError,
  PermissionDeniedError,
  RateLimitError,
  ServiceUnavailableError,
  TimeoutError,
} from '../../../src/core/errors/service.js';

const START = Date.parse('2026-03-01T10:00:00.000Z');
const MERCHANT_ID = 'M1001';
const API_KEY = 'sk_live_transport_8d41a7c2';
const BASE_URL = 'https://pg.example.com/api/v1/';

/** Small waits, no jitter: each backoff is baseDelayMs doubled per retry, so it can be asserted. */
const RETRY: RetryOptions = { baseDelayMs: 100, jitterMs: 0, maxDelayMs: 60_000, maxRetries: 3 };

/** What the fake fetch was handed. */
interface Sent {
  url: string;
  path: string;
  method: string | undefined;
  headers: Headers;
  body: string | undefined;
  signal: AbortSignal;
}

/** One scripted answer: a Response, an error fetch throws, or a function of the request giving either (or hanging). */
type Step = Response | Error | ((sent: Sent) => Response | Error | Promise<Response>);

const json = (status: number, body: unknown, headers: Record<string, string> = {}) =>
  new Response(JSON.stringify(body), { status, headers: { 'content-type': 'application/json', ...headers } });
const failure = (status: number, error: string, message = 'refused', headers: Record<string, string> = {}) =>
  json(status, { status: 'error', error, message }, headers);
const success = (data: unknown = { ok: true }, headers: Record<string, string> = {}) => json(200, { status: 'success', data }, headers);
/** The error undici throws for a failed connection, the system code in its cause. */
const fetchFailed = (code: string) => new TypeError('fetch failed', { cause: Object.assign(new Error(code), { code }) });
/** An answer that never comes: rejects when the attempt's signal aborts, as fetch does. */
const hang = (sent: Sent) =>
  new Promise<Response>((_resolve, reject) => sent.signal.addEventListener('abort', () => reject(sent.signal.reason), { once: true }));

interface HarnessOptions {
  /** Answers to the API (every path but auth/token), in order. */
  steps?: Step[];
  /** What answers once the steps are used up (default: a test failure). */
  then?: Step;
  /** Answers to POST /auth/token, in order; then a fresh token each time. */
  tokenSteps?: Step[];
  retry?: RetryOptions;
  timeout?: number;
  totalTimeout?: number;
  /** Wire no token manager. */
  noTokens?: boolean;
  /** The real abortable sleep (for fake timers) instead of the recording one. */
  realSleep?: boolean;
  pacer?: Pacer;
  /** Milliseconds each answer takes on the injected clock. */
  latencyMs?: number;
}

let keys = 0;

/** A Transport wired as src/client.ts wires it, over a scripted fetch and an injected clock. */
function harness(options: HarnessOptions = {}) {
  let clock = START;
  const now = () => clock;
  const steps = [...(options.steps ?? [])];
  const tokenSteps = [...(options.tokenSteps ?? [])];
  const sent: Sent[] = [];
  let issued = 0;

  const play = async (step: Step, request: Sent): Promise<Response> => {
    const answer = typeof step === 'function' ? await step(request) : step;
    if (answer instanceof Error) throw answer;
    return answer;
  };
  const fetch = async (input: RequestInfo | URL, init?: RequestInit): Promise<Response> => {
    const url = typeof input === 'string' ? input : input instanceof URL ? input.href : input.url;
    if (!init?.signal) throw new Error('every attempt must carry a signal');
    const request: Sent = {
      url,
      path: url.slice(BASE_URL.length),
      method: init.method,
      headers: new Headers(init.headers),
      body: typeof init.body === 'string' ? init.body : undefined,
      signal: init.signal,
    };
    sent.push(request);
    if (request.path === 'auth/token') {
      const step = tokenSteps.shift();
      if (step) return play(step, request);
      issued += 1;
      return success({ access_token: `at_${issued}.eyJtIjoiTTEwMDEifQ.s${issued}`, expires_in: 3600 });
    }
    clock += options.latencyMs ?? 0;
    const step = steps.shift() ?? options.then;
    if (!step) throw new Error(`unscripted request ${request.method} /${request.path}`);
    return play(step, request);
  };

  const delays: number[] = [];
  const recordingSleep = vi.fn(async (ms: number, signal?: AbortSignal) => {
    if (signal?.aborted) throw signal.reason;
    delays.push(ms);
    clock += ms;
  });
  const logLines: string[] = [];
  const keep = (message: unknown, fields?: unknown) => void logLines.push(`${String(message)} ${JSON.stringify(fields ?? {})}`);
  const warnings: string[] = [];

  const config: TransportConfig = {
    baseUrl: BASE_URL,
    fetch,
    timeout: options.timeout ?? 30_000,
    totalTimeout: options.totalTimeout ?? 120_000,
    retry: resolveRetryOptions(options.retry ?? RETRY),
    userAgent: 'myr-gateway/unit',
    now,
    random: () => 0,
    sleep: options.realSleep ? abortableSleep : recordingSleep,
    redact: redactSecret(API_KEY),
    observer: new Observer({ now, tracer: false, logLevel: 'debug', logger: { debug: keep, info: keep, warn: keep, error: keep } }, 'unit'),
    pacer: options.pacer,
  };
  const transport = new Transport(config);
  if (!options.noTokens) {
    const key = `myr-gateway:token:unit-transport-${++keys}`;
    transport.useTokens(
      new TokenManager({
        store: new MemoryTokenStore(),
        key: async () => key,
        seal: () => tokenSeal(API_KEY),
        now,
        refreshMarginMs: 60_000,
        storeTimeoutMs: 1000,
        storeRefreshTimeoutMs: 31_000,
        warn: (message) => void warnings.push(message),
        fetchToken: async (signal, beforeAttempt) => {
          const { data } = await transport.call(
            { method: 'POST', path: 'auth/token', body: { merchant_id: MERCHANT_ID, api_key: API_KEY }, authenticated: false, operation: 'token' },
            { signal },
            beforeAttempt,
          );
          return readToken(data, now());
        },
      }),
    );
  }
  /** The requests to the API (the token requests left out). */
  const api = () => sent.filter((request) => request.path !== 'auth/token');
  const tokenRequests = () => sent.filter((request) => request.path === 'auth/token');
  return { transport, sent, api, tokenRequests, delays, sleep: recordingSleep, logLines, warnings, now };
}

const status = (identifier = 'ORDER1001', authenticated = true): CallSpec => ({
  method: 'GET',
  path: `payment/status/${identifier}`,
  authenticated,
  operation: 'status',
});
const createPayment = (referenceId = 'ORDER1001', authenticated = true): CallSpec => ({
  method: 'POST',
  path: 'payment/request',
  body: { reference_id: referenceId, amount: 150, currency: 'MYR', payment_method: 'QR' },
  authenticated,
  operation: 'payment.create',
  referenceId,
});
const withdraw = (referenceId = 'WD1001', operation: 'withdraw' | 'withdraw.recover' = 'withdraw', authenticated = true): CallSpec => ({
  method: 'POST',
  path: 'payment/withdraw',
  body: { reference_id: referenceId, amount: '120.00', bank_code: 'MBBEMYKL', account_number: '5140123456789' },
  authenticated,
  operation,
  referenceId,
});

/** The rejection of `promise` (fails the test if it resolves). */
async function rejection(promise: Promise<unknown>): Promise<MyrGatewayError> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(MyrGatewayError);
  return error as MyrGatewayError;
}

afterEach(() => {
  vi.useRealTimers();
});

describe('a call that succeeds', () => {
  it('resolves with the parsed body and the metadata of the answer it came from', async () => {
    const body = { status: 'success', data: { payment_id: 'P1', status: 'PENDING' } };
    const rateLimit = { 'x-ratelimit-limit': '100', 'x-ratelimit-remaining': '98', 'x-ratelimit-reset': '1772359260' };
    const h = harness({ steps: [json(200, body, { 'x-correlation-id': 'corr-1', ...rateLimit })], latencyMs: 40 });

    const result = await h.transport.call(status());

    expect(result.data).toEqual(body);
    expect(result.response).toEqual({
      status: 200,
      correlationId: 'corr-1',
      rateLimit: { limit: 100, remaining: 98, reset: 1772359260, observedAt: START + 40 },
      attempts: 1,
      durationMs: 40,
    });
    expect(h.transport.rateLimit).toEqual(result.response.rateLimit);
  });

  it('sends the request below the base URL (its trailing slash dropped) with the bearer token it fetched', async () => {
    const h = harness({ steps: [success()] });
    await h.transport.call(status('ORDER1001'));

    const [tokenRequest] = h.tokenRequests();
    expect(tokenRequest?.url).toBe('https://pg.example.com/api/v1/auth/token');
    expect(JSON.parse(tokenRequest?.body ?? '')).toEqual({ merchant_id: MERCHANT_ID, api_key: API_KEY });
    expect(tokenRequest?.headers.has('authorization')).toBe(false);
    const [request] = h.api();
    expect(request?.url).toBe('https://pg.example.com/api/v1/payment/status/ORDER1001');
    expect(request?.headers.get('authorization')).toBe('Bearer at_1.eyJtIjoiTTEwMDEifQ.s1');
  });

  it('reuses the token for the next call instead of asking for another', async () => {
    const h = harness({ then: () => success() });
    await h.transport.call(status('A1'));
    await h.transport.call(status('A2'));
    expect(h.tokenRequests()).toHaveLength(1);
    expect(h.api().map((request) => request.headers.get('authorization'))).toEqual(['Bearer at_1.eyJtIjoiTTEwMDEifQ.s1', 'Bearer at_1.eyJtIjoiTTEwMDEifQ.s1']);
  });

  it('reports the attempts, the whole duration (waits included) and the last answer of a call that succeeded after a retry', async () => {
    const h = harness({
      steps: [failure(503, 'NO_GATEWAY_AVAILABLE', 'no gateway', { 'x-correlation-id': 'corr-a' }), success({ ok: 1 }, { 'x-correlation-id': 'corr-b' })],
      latencyMs: 30,
    });
    const result = await h.transport.call(status());

    expect(h.delays).toEqual([100]);
    expect(result.response).toMatchObject({ status: 200, correlationId: 'corr-b', attempts: 2, durationMs: 30 + 100 + 30 });
  });

  it('outcomeOf answers a success with the same data and metadata as call, and ok: true', async () => {
    const h = harness({ steps: [success({ n: 1 }, { 'x-correlation-id': 'corr-s' })] });
    const outcome = await h.transport.outcomeOf(status());
    expect(outcome).toEqual({
      ok: true,
      data: { status: 'success', data: { n: 1 } },
      response: { status: 200, correlationId: 'corr-s', rateLimit: undefined, attempts: 1, durationMs: 0 },
    });
  });

  it('refuses a per-call option out of range with an InvalidRequestError, before anything is sent', async () => {
    const h = harness({ noTokens: true });
    const error = await rejection(h.transport.call(status(undefined, false), { timeout: 0 }));
    expect(error).toBeInstanceOf(InvalidRequestError);
    expect(error.field).toBe('timeout');
    expect(h.sent).toHaveLength(0);
  });
});

describe('retries', () => {
  it.each<[string, () => Step]>([
    ['429 RATE_LIMITED', () => failure(429, 'RATE_LIMITED')],
    ['500 without a body', () => new Response('', { status: 500 })],
    ['502 GATEWAY_ERROR', () => failure(502, 'GATEWAY_ERROR')],
    ['503 NO_GATEWAY_AVAILABLE', () => failure(503, 'NO_GATEWAY_AVAILABLE')],
    ['504 GATEWAY_TIMEOUT', () => failure(504, 'GATEWAY_TIMEOUT')],
    ['a refused connection', () => fetchFailed('ECONNREFUSED')],
    ['a reset connection', () => fetchFailed('ECONNRESET')],
  ])('sends a status lookup again after %s, and returns the answer of the retry', async (_name, first) => {
    const h = harness({ steps: [first(), success({ found: true })] });
    const result = await h.transport.call(status());

    expect(h.api()).toHaveLength(2);
    expect(h.delays).toEqual([100]);
    expect(result.data).toEqual({ status: 'success', data: { found: true } });
    expect(result.response.attempts).toBe(2);
  });

  it('waits the doubling backoff between attempts and, after maxRetries, throws the last error', async () => {
    const h = harness({ then: () => failure(503, 'NO_GATEWAY_AVAILABLE', 'no gateway') });
    const error = await rejection(h.transport.call(status()));

    expect(h.api()).toHaveLength(4);
    expect(h.delays).toEqual([100, 200, 400]);
    expect(error).toBeInstanceOf(ServiceUnavailableError);
    expect(error).toMatchObject({ code: 'NO_GATEWAY_AVAILABLE', status: 503, retryable: true });
  });

  it("lets a call's maxRetries override the client's", async () => {
    const h = harness({ then: () => failure(502, 'GATEWAY_ERROR') });
    await rejection(h.transport.call(status(), { maxRetries: 1 }));
    expect(h.api()).toHaveLength(2);
    expect(h.delays).toEqual([100]);
  });

  it("waits a 429's Retry-After rather than the shorter backoff", async () => {
    const h = harness({ steps: [failure(429, 'RATE_LIMITED', 'slow down', { 'retry-after': '5' }), success()] });
    await h.transport.call(status());
    expect(h.delays).toEqual([5000]);
  });

  it('gives up at once on a Retry-After longer than maxDelayMs, with the RateLimitError telling the wait', async () => {
    const h = harness({ then: () => failure(429, 'RATE_LIMITED', 'slow down', { 'retry-after': '120' }) });
    const error = await rejection(h.transport.call(status()));

    expect(h.api()).toHaveLength(1);
    expect(h.sleep).not.toHaveBeenCalled();
    expect(error).toBeInstanceOf(RateLimitError);
    expect(error.retryAfter).toBe(120);
  });

  it('does not start a wait that would outlast the total timeout', async () => {
    const h = harness({ totalTimeout: 2000, then: () => failure(429, 'RATE_LIMITED', 'slow down', { 'retry-after': '5' }) });
    const error = await rejection(h.transport.call(status()));
    expect(error).toBeInstanceOf(RateLimitError);
    expect(h.api()).toHaveLength(1);
    expect(h.sleep).not.toHaveBeenCalled();
  });

  it.each<[number, string, abstract new (...args: never[]) => MyrGatewayError]>([
    [400, 'VALIDATION_ERROR', InvalidRequestError],
    [400, 'INVALID_AMOUNT', InvalidRequestError],
    [403, 'MERCHANT_DISABLED', PermissionDeniedError],
    [404, 'NOT_FOUND', NotFoundError],
    [409, 'DUPLICATE_REFERENCE', DuplicateReferenceError],
    [422, 'VALIDATION_ERROR', InvalidRequestError],
  ])('never sends a payment create again after %i %s, and throws it typed, with the reference_id', async (httpStatus, code, type) => {
    const h = harness({ then: () => failure(httpStatus, code, 'no', { 'x-correlation-id': 'corr-4xx' }) });
    const outcome = await h.transport.outcomeOf(createPayment('ORDER2001'));

    expect(h.api()).toHaveLength(1);
    expect(h.sleep).not.toHaveBeenCalled();
    expect(outcome.ok).toBe(false);
    if (outcome.ok) return;
    expect(outcome.maybeProcessed).toBe(false);
    expect(outcome.error).toBeInstanceOf(type);
    expect(outcome.error).toMatchObject({ code, status: httpStatus, correlationId: 'corr-4xx', retryable: false });
  });
});

describe('a money-moving request that may have been processed', () => {
  it.each<[string, () => Step]>([
    ['500', () => failure(500, 'INTERNAL_ERROR', 'boom')],
    ['502 GATEWAY_ERROR', () => failure(502, 'GATEWAY_ERROR', 'bank limit reached')],
    ['504 GATEWAY_TIMEOUT', () => failure(504, 'GATEWAY_TIMEOUT', 'upstream silent')],
    ["503 that is not the spec's NO_GATEWAY_AVAILABLE (a proxy's page)", () => new Response('<html>503</html>', { status: 503 })],
    ['a connection reset after sending', () => fetchFailed('ECONNRESET')],
  ])('a withdrawal is not sent again after %s: OutcomeUnknownError, maybeProcessed', async (_name, step) => {
    const h = harness({ steps: [step()], then: () => success() });
    const outcome = await h.transport.outcomeOf(withdraw('WD1001'));

    expect(h.api()).toHaveLength(1);
    expect(h.sleep).not.toHaveBeenCalled();
    expect(outcome.ok).toBe(false);
    if (outcome.ok) return;
    expect(outcome.maybeProcessed).toBe(true);
    expect(outcome.remainingMs).toBeGreaterThan(0);
    expect(outcome.remainingMs).toBeLessThanOrEqual(120_000);
    const error = outcome.error as OutcomeUnknownError;
    expect(error).toBeInstanceOf(OutcomeUnknownError);
    expect(error).toMatchObject({ code: 'OUTCOME_UNKNOWN', referenceId: 'WD1001', retryable: false });
    expect(error.cause).toBeInstanceOf(MyrGatewayError);
    expect(error.message).toContain('reference_id WD1001');
    expect(error.message).toContain('withdrawals.recover');
  });

  it('a withdrawal recovery is never sent twice either', async () => {
    const h = harness({ steps: [failure(502, 'GATEWAY_ERROR')], then: () => success() });
    const error = await rejection(h.transport.call(withdraw('WD1002', 'withdraw.recover')));
    expect(error).toBeInstanceOf(OutcomeUnknownError);
    expect(h.api()).toHaveLength(1);
  });

  it('keeps the status and correlation id of the answer on the OutcomeUnknownError', async () => {
    const h = harness({ steps: [failure(504, 'GATEWAY_TIMEOUT', 'upstream silent', { 'x-correlation-id': 'corr-504' })] });
    const error = await rejection(h.transport.call(withdraw()));
    expect(error).toMatchObject({ status: 504, correlationId: 'corr-504' });
    expect((error.cause as MyrGatewayError).code).toBe('GATEWAY_TIMEOUT');
  });

  it.each<[string, () => Step]>([
    ['a refused connection (nothing left this machine)', () => fetchFailed('ECONNREFUSED')],
    ['503 NO_GATEWAY_AVAILABLE (the service took nothing)', () => failure(503, 'NO_GATEWAY_AVAILABLE')],
    ['429 RATE_LIMITED (refused requests are not processed)', () => failure(429, 'RATE_LIMITED')],
  ])('a withdrawal is sent again after %s, the same body', async (_name, step) => {
    const h = harness({ steps: [step(), success({ withdrawal_id: 'W1' })] });
    const result = await h.transport.call(withdraw('WD1003'));

    expect(result.data).toEqual({ status: 'success', data: { withdrawal_id: 'W1' } });
    const [first, second] = h.api();
    expect(second?.body).toBe(first?.body);
  });

  it('a payment create is sent again with the same reference_id after a 502 (the service refuses a second payment under it)', async () => {
    const h = harness({ steps: [failure(502, 'GATEWAY_ERROR'), json(201, { status: 'success', data: { payment_id: 'P9' } })] });
    const result = await h.transport.call(createPayment('ORDER3001'));

    expect(result.response).toMatchObject({ status: 201, attempts: 2 });
    const [first, second] = h.api();
    expect(JSON.parse(second?.body ?? '').reference_id).toBe('ORDER3001');
    expect(second?.body).toBe(first?.body);
  });

  it('a payment create that keeps failing after a maybe-processed attempt settles with maybeProcessed and the time left', async () => {
    const h = harness({ then: () => failure(500, 'INTERNAL_ERROR') });
    const outcome = await h.transport.outcomeOf(createPayment('ORDER3002'));

    expect(h.api()).toHaveLength(4);
    expect(outcome.ok).toBe(false);
    if (outcome.ok) return;
    expect(outcome.error).toBeInstanceOf(ServiceUnavailableError);
    expect(outcome.maybeProcessed).toBe(true);
    expect(outcome.remainingMs).toBeGreaterThan(0);
  });

  it('a payment create met with DUPLICATE_REFERENCE after a maybe-processed attempt still says maybeProcessed (for reconcile)', async () => {
    const h = harness({ steps: [fetchFailed('ECONNRESET'), failure(409, 'DUPLICATE_REFERENCE', 'reference_id already used')] });
    const outcome = await h.transport.outcomeOf(createPayment('ORDER3003'));

    expect(outcome.ok).toBe(false);
    if (outcome.ok) return;
    expect(outcome.error).toBeInstanceOf(DuplicateReferenceError);
    expect(outcome.maybeProcessed).toBe(true);
  });

  it('a payment create refused with 429 says it was not processed', async () => {
    const h = harness({ retry: { ...RETRY, maxRetries: 0 }, then: () => failure(429, 'RATE_LIMITED') });
    const outcome = await h.transport.outcomeOf(createPayment('ORDER3004'));
    expect(outcome.ok || outcome.maybeProcessed).toBe(false);
  });
});

describe('timeouts and aborts', () => {
  it('abandons an attempt at its timeout and sends a status lookup again', async () => {
    vi.useFakeTimers();
    const h = harness({ noTokens: true, timeout: 1000, realSleep: true, steps: [hang, success({ late: false })] });
    const pending = h.transport.call(status(undefined, false));
    // The attempt timeout, the backoff, and ky's own retry wait: 0 ms (the backoff is the
    // client's sleep), which a timer runs 1 ms later.
    await vi.advanceTimersByTimeAsync(1000 + 100 + 1);
    const result = await pending;

    expect(result.response.attempts).toBe(2);
    expect(h.sent[0]?.signal.aborted).toBe(true);
    expect(vi.getTimerCount()).toBe(0);
  });

  it('ends with a TimeoutError naming the total timeout when the call runs out of time, without another attempt', async () => {
    vi.useFakeTimers();
    const h = harness({ noTokens: true, timeout: 30_000, totalTimeout: 1000, realSleep: true, then: hang });
    const settled = h.transport.outcomeOf(status(undefined, false));
    await vi.advanceTimersByTimeAsync(1000);
    const outcome = await settled;

    expect(h.sent).toHaveLength(1);
    expect(outcome.ok).toBe(false);
    if (outcome.ok) return;
    expect(outcome.error).toBeInstanceOf(TimeoutError);
    expect(outcome.error).toMatchObject({ code: 'TIMEOUT', retryable: true });
    expect((outcome.error as Error).message).toMatch(/total timeout/);
    expect(outcome.remainingMs).toBeLessThanOrEqual(0);
  });

  it('a withdrawal whose attempt timed out is not sent again: OutcomeUnknownError', async () => {
    vi.useFakeTimers();
    const h = harness({ noTokens: true, timeout: 1000, realSleep: true, then: hang });
    const settled = h.transport.outcomeOf(withdraw('WD2001', 'withdraw', false));
    await vi.advanceTimersByTimeAsync(1000);
    const outcome = await settled;

    expect(h.sent).toHaveLength(1);
    expect(outcome.ok).toBe(false);
    if (outcome.ok) return;
    expect(outcome.error).toBeInstanceOf(OutcomeUnknownError);
    expect(outcome.maybeProcessed).toBe(true);
  });

  it("ends with an AbortError when the caller's signal aborts an attempt in flight, and aborts the request", async () => {
    const h = harness({ noTokens: true, then: hang });
    const controller = new AbortController();
    const pending = h.transport.call(status(undefined, false), { signal: controller.signal });
    await vi.waitFor(() => expect(h.sent).toHaveLength(1));
    controller.abort(new Error('customer left'));
    const error = await rejection(pending);

    expect(error).toBeInstanceOf(AbortError);
    expect(error.code).toBe('ABORTED');
    expect(h.sent[0]?.signal.aborted).toBe(true);
    expect(h.sent).toHaveLength(1);
  });

  it('ends with an AbortError during the backoff wait, sending nothing more and leaving no timer', async () => {
    vi.useFakeTimers();
    const h = harness({ noTokens: true, realSleep: true, retry: { ...RETRY, baseDelayMs: 5000 }, then: () => failure(503, 'NO_GATEWAY_AVAILABLE') });
    const controller = new AbortController();
    const pending = h.transport.call(status(undefined, false), { signal: controller.signal });
    await vi.advanceTimersByTimeAsync(100);
    expect(h.sent).toHaveLength(1);
    controller.abort();
    const error = await rejection(pending);

    expect(error).toBeInstanceOf(AbortError);
    expect(h.sent).toHaveLength(1);
    expect(vi.getTimerCount()).toBe(0);
  });

  it('sends nothing for a signal that is already aborted', async () => {
    const h = harness();
    const error = await rejection(h.transport.call(status(), { signal: AbortSignal.abort() }));
    expect(error).toBeInstanceOf(AbortError);
    expect(h.sent).toHaveLength(0);
  });

  it('an aborted payment create whose earlier attempt may have been processed says so, with what to do', async () => {
    vi.useFakeTimers();
    const h = harness({ noTokens: true, realSleep: true, then: () => failure(502, 'GATEWAY_ERROR') });
    const controller = new AbortController();
    const settled = h.transport.outcomeOf(createPayment('ORDER4001', false), { signal: controller.signal });
    await vi.advanceTimersByTimeAsync(50);
    controller.abort();
    const outcome = await settled;

    expect(outcome.ok).toBe(false);
    if (outcome.ok) return;
    expect(outcome.maybeProcessed).toBe(true);
    const error = outcome.error as MyrGatewayError;
    expect(error).toBeInstanceOf(AbortError);
    expect(error.referenceId).toBe('ORDER4001');
    expect(error.message).toMatch(/may have reached the service/);
    expect(error.message).toContain('same reference_id ORDER4001');
  });

  it("a withdrawal aborted while its attempt was in flight ends as OutcomeUnknownError, not a plain abort", async () => {
    const h = harness({ noTokens: true, then: hang });
    const controller = new AbortController();
    const settled = h.transport.outcomeOf(withdraw('WD2002', 'withdraw', false), { signal: controller.signal });
    await vi.waitFor(() => expect(h.sent).toHaveLength(1));
    controller.abort();
    const outcome = await settled;

    expect(outcome.ok).toBe(false);
    if (outcome.ok) return;
    expect(outcome.error).toBeInstanceOf(OutcomeUnknownError);
    expect(outcome.maybeProcessed).toBe(true);
    // It says what stopped it: the caller's signal, not an attempt timeout that never happened.
    const error = outcome.error as OutcomeUnknownError;
    expect(error.cause).toBeInstanceOf(AbortError);
    expect(error.message).toContain('aborted by its signal');
    expect(error.message).not.toMatch(/within \d+ ms for this attempt/);
  });

  it('a withdrawal cut by its total timeout while in flight says the total timeout stopped it', async () => {
    vi.useFakeTimers();
    const h = harness({ noTokens: true, timeout: 10_000, realSleep: true, then: hang });
    const settled = h.transport.outcomeOf(withdraw('WD2003', 'withdraw', false), { totalTimeout: 300 });
    await vi.advanceTimersByTimeAsync(300);
    const outcome = await settled;

    expect(outcome.ok).toBe(false);
    if (outcome.ok) return;
    const error = outcome.error as OutcomeUnknownError;
    expect(error).toBeInstanceOf(OutcomeUnknownError);
    expect(error.cause).toBeInstanceOf(TimeoutError);
    expect(error.message).toContain('total timeout');
    expect(outcome.remainingMs).toBe(0);
  });
});

describe('access tokens', () => {
  it('renews the token once after TOKEN_EXPIRED and sends the request again with the new one, without a backoff', async () => {
    const h = harness({ steps: [failure(401, 'TOKEN_EXPIRED', 'expired'), success({ renewed: true })] });
    const result = await h.transport.call(status());

    expect(result.data).toEqual({ status: 'success', data: { renewed: true } });
    expect(h.tokenRequests()).toHaveLength(2);
    expect(h.api().map((request) => request.headers.get('authorization'))).toEqual([
      'Bearer at_1.eyJtIjoiTTEwMDEifQ.s1',
      'Bearer at_2.eyJtIjoiTTEwMDEifQ.s2',
    ]);
    expect(h.sleep).not.toHaveBeenCalled();
  });

  it('stops with an AuthenticationError when the renewed token is refused too, and drops it for the next call', async () => {
    const h = harness({ steps: [failure(401, 'UNAUTHORIZED'), failure(401, 'UNAUTHORIZED'), success()] });
    const error = await rejection(h.transport.call(status('A1')));
    expect(error).toBeInstanceOf(AuthenticationError);
    expect(error.code).toBe('UNAUTHORIZED');
    expect(h.api()).toHaveLength(2);

    await h.transport.call(status('A2'));
    expect(h.tokenRequests()).toHaveLength(3);
    expect(h.api()[2]?.headers.get('authorization')).toBe('Bearer at_3.eyJtIjoiTTEwMDEifQ.s3');
  });

  it('fails the call with the token answer INVALID_CREDENTIALS, sending nothing to the API', async () => {
    const h = harness({ tokenSteps: [failure(401, 'INVALID_CREDENTIALS', 'bad credentials')], then: () => success() });
    const error = await rejection(h.transport.call(status()));
    expect(error).toBeInstanceOf(AuthenticationError);
    expect(error.code).toBe('INVALID_CREDENTIALS');
    expect(h.tokenRequests()).toHaveLength(1);
    expect(h.api()).toHaveLength(0);
  });

  it('fails an authenticated call with AuthenticationError when no token manager is wired, sending nothing', async () => {
    const h = harness({ noTokens: true });
    const error = await rejection(h.transport.call(status()));
    expect(error).toBeInstanceOf(AuthenticationError);
    expect(h.sent).toHaveLength(0);
  });

  it('tells the token limiter, for each attempt, whether the service may have seen it and any Retry-After', async () => {
    const h = harness({
      noTokens: true,
      tokenSteps: [fetchFailed('ECONNREFUSED'), failure(429, 'RATE_LIMITED', 'slow', { 'retry-after': '2' }), success({ access_token: 'x' })],
    });
    const reports: TokenAttemptReport[] = [];
    let before = 0;
    await h.transport.call({ method: 'POST', path: 'auth/token', body: {}, authenticated: false, operation: 'token' }, {}, () => {
      before += 1;
      return (report) => void reports.push(report);
    });

    expect(before).toBe(3);
    expect(reports).toEqual([
      { sent: false },
      { sent: true, status: 429, retryAfterMs: 2000 },
      { sent: true, status: 200, retryAfterMs: undefined },
    ]);
  });
});

describe('pacing', () => {
  /** A limiter that grants every slot and records what it is told. */
  function recordingLimiter(refuse?: Error) {
    const acquired: RateBucket[] = [];
    const observed: RateLimitObservation[] = [];
    const limiter: RateLimiter = {
      async acquire(_key, bucket) {
        if (refuse) throw refuse;
        acquired.push(bucket);
      },
      observe(_key, _bucket, observation) {
        observed.push(observation);
      },
    };
    return { limiter, acquired, observed };
  }

  it("takes a slot in the operation's bucket before every attempt and reports each answer back", async () => {
    const { limiter, acquired, observed } = recordingLimiter();
    const h = harness({
      noTokens: true,
      pacer: new Pacer(limiter, async () => 'k'),
      steps: [failure(503, 'NO_GATEWAY_AVAILABLE'), json(201, { status: 'success', data: {} })],
    });
    await h.transport.call(createPayment('ORDER5001', false));

    expect(acquired).toEqual(['payment', 'payment']);
    expect(observed.map((observation) => observation.status)).toEqual([503, 201]);
  });

  it("stops with the limiter's refusal before anything is sent", async () => {
    const refusal = new RateLimitError('RATE_LIMITED: no free slot', { code: 'RATE_LIMITED', retryable: true, retryAfter: 3 });
    const { limiter } = recordingLimiter(refusal);
    const h = harness({ noTokens: true, pacer: new Pacer(limiter, async () => 'k') });
    const error = await rejection(h.transport.call(withdraw('WD5001', 'withdraw', false)));
    expect(error).toBe(refusal);
    expect(h.sent).toHaveLength(0);
  });
});

describe('secrets', () => {
  /** Every form a merchant might print an error in, down its cause chain. */
  function printed(error: unknown): string {
    const parts: string[] = [];
    for (let current = error, depth = 0; current instanceof Error && depth < 5; current = current.cause, depth++) {
      parts.push(current.message, current.stack ?? '', JSON.stringify(current), inspect(current), String(current));
    }
    return parts.join('\n');
  }

  it('the api key echoed by the token endpoint reaches neither the thrown error nor a log line', async () => {
    const h = harness({ tokenSteps: [failure(401, 'INVALID_CREDENTIALS', `api_key ${API_KEY} is not valid for ${MERCHANT_ID}`)] });
    const error = await rejection(h.transport.call(status()));

    expect(error.code).toBe('INVALID_CREDENTIALS');
    expect(error.message).toContain('[redacted]');
    expect(printed(error)).not.toContain(API_KEY);
    expect(h.logLines.length).toBeGreaterThan(0);
    expect(h.logLines.join('\n')).not.toContain(API_KEY);
  });

  it.each<[string, (token: string) => Response, () => CallSpec]>([
    ['a 403 on a status lookup', (token) => failure(403, 'MERCHANT_LOCKED', `locked; token ${token}, key ${API_KEY}`), () => status()],
    ['a 502 on a withdrawal (wrapped in OutcomeUnknownError)', (token) => failure(502, 'GATEWAY_ERROR', `upstream saw ${token} / ${API_KEY}`), () => withdraw()],
    ['a 401 that ends the call after renewal', (token) => failure(401, 'UNAUTHORIZED', `bad bearer ${token} for ${API_KEY}`), () => status()],
  ])('the access token and the api key echoed in %s reach neither the thrown error nor a log line', async (_name, answer, spec) => {
    const h = harness({ then: (sent) => answer((sent.headers.get('authorization') ?? '').replace('Bearer ', '')) });
    const error = await rejection(h.transport.call(spec()));

    const tokens = h.api().map((request) => (request.headers.get('authorization') ?? '').replace('Bearer ', ''));
    expect(tokens.every((token) => token.startsWith('at_'))).toBe(true);
    const text = printed(error);
    expect(text).toContain('[redacted]');
    expect(text).not.toContain(API_KEY);
    for (const token of tokens) {
      expect(text).not.toContain(token);
      expect(h.logLines.join('\n')).not.toContain(token);
    }
    expect(h.logLines.join('\n')).not.toContain(API_KEY);
  });

  it("masks a withdrawal's account number the service echoed back, as the call's own redaction asks", async () => {
    const h = harness({ then: () => failure(400, 'INVALID_BANK_CODE', 'bank MBBEMYKL cannot pay 5140123456789') });
    const error = await rejection(h.transport.call({ ...withdraw('WD6001'), redact: accountNumberRedactor('5140123456789') }));

    expect(error).toBeInstanceOf(InvalidRequestError);
    expect(error.message).toContain('****6789');
    expect(printed(error)).not.toContain('5140123456789');
  });

  it('a connection failure carries only the system code as its cause', async () => {
    const h = harness({ noTokens: true, retry: { ...RETRY, maxRetries: 0 }, then: () => fetchFailed('ECONNREFUSED') });
    const error = await rejection(h.transport.call(status(undefined, false)));
    expect(error).toBeInstanceOf(ConnectionError);
    expect(error.cause).toEqual({ code: 'ECONNREFUSED' });
  });
});
