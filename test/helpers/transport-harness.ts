/**
 * The harness of the transport's unit tests (test/unit/core/call/transport.test.ts and the tests of the
 * modules it runs a call with): a Transport wired as src/client.ts wires it (a real TokenManager on
 * a store of its own, the client's redaction of the api key, an Observer), with a scripted fake
 * fetch instead of the network, an injected clock and an injected sleep that records each backoff.
 */
import { expect, vi } from 'vitest';
import { resolveRetryOptions, type RetryOptions } from '../../src/core/call/retry-options.js';
import { wait as abortableSleep } from '../../src/core/wait.js';
import { Transport, type TransportConfig } from '../../src/core/call/transport.js';
import type { CallSpec } from '../../src/core/call/call-spec.js';
import { MemoryTokenStore, TokenManager } from '../../src/core/tokens/manager.js';
import { tokenSeal } from '../../src/core/tokens/seal.js';
import { readToken } from '../../src/core/tokens/answer.js';
import { Observer } from '../../src/core/observe/observer.js';
import type { Pacer } from '../../src/core/pacing/pacer.js';
import { redactSecret } from '../../src/core/redact.js';
import { MyrGatewayError } from '../../src/core/errors/base.js';

export const START = Date.parse('2026-03-01T10:00:00.000Z');
export const MERCHANT_ID = 'M1001';
export const API_KEY = 'sk_live_transport_8d41a7c2';
export const BASE_URL = 'https://pg.example.com/api/v1/';

/** Small waits, no jitter: each backoff is baseDelayMs doubled per retry, so it can be asserted. */
export const RETRY: RetryOptions = { baseDelayMs: 100, jitterMs: 0, maxDelayMs: 60_000, maxRetries: 3 };

/** What the fake fetch was handed. */
export interface Sent {
  url: string;
  path: string;
  method: string | undefined;
  headers: Headers;
  body: string | undefined;
  signal: AbortSignal;
}

/** One scripted answer: a Response, an error fetch throws, or a function of the request giving either (or hanging). */
export type Step = Response | Error | ((sent: Sent) => Response | Error | Promise<Response>);

export const json = (status: number, body: unknown, headers: Record<string, string> = {}) =>
  new Response(JSON.stringify(body), { status, headers: { 'content-type': 'application/json', ...headers } });
export const failure = (status: number, error: string, message = 'refused', headers: Record<string, string> = {}) =>
  json(status, { status: 'error', error, message }, headers);
export const success = (data: unknown = { ok: true }, headers: Record<string, string> = {}) =>
  json(200, { status: 'success', data }, headers);
/** The error undici throws for a failed connection, the system code in its cause. */
export const fetchFailed = (code: string) =>
  new TypeError('fetch failed', { cause: Object.assign(new Error(code), { code }) });
/** An answer that never comes: rejects when the attempt's signal aborts, as fetch does. */
export const hang = (sent: Sent) =>
  new Promise<Response>((_resolve, reject) =>
    sent.signal.addEventListener('abort', () => reject(sent.signal.reason), { once: true }),
  );

export interface HarnessOptions {
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
export function harness(options: HarnessOptions = {}) {
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
  const keep = (message: unknown, fields?: unknown) =>
    void logLines.push(`${String(message)} ${JSON.stringify(fields ?? {})}`);
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
    observer: new Observer(
      { now, tracer: false, logLevel: 'debug', logger: { debug: keep, info: keep, warn: keep, error: keep } },
      'unit',
    ),
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
            {
              method: 'POST',
              path: 'auth/token',
              body: { merchant_id: MERCHANT_ID, api_key: API_KEY },
              authenticated: false,
              operation: 'token',
            },
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

export const status = (identifier = 'ORDER1001', authenticated = true): CallSpec => ({
  method: 'GET',
  path: `payment/status/${identifier}`,
  authenticated,
  operation: 'status',
});
export const createPayment = (referenceId = 'ORDER1001', authenticated = true): CallSpec => ({
  method: 'POST',
  path: 'payment/request',
  body: { reference_id: referenceId, amount: 150, currency: 'MYR', payment_method: 'QR' },
  authenticated,
  operation: 'payment.create',
  referenceId,
});
export const withdraw = (
  referenceId = 'WD1001',
  operation: 'withdraw' | 'withdraw.recover' = 'withdraw',
  authenticated = true,
): CallSpec => ({
  method: 'POST',
  path: 'payment/withdraw',
  body: { reference_id: referenceId, amount: '120.00', bank_code: 'MBBEMYKL', account_number: '5140123456789' },
  authenticated,
  operation,
  referenceId,
});

/** The rejection of `promise` (fails the test if it resolves). */
export async function rejection(promise: Promise<unknown>): Promise<MyrGatewayError> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(MyrGatewayError);
  return error as MyrGatewayError;
}
