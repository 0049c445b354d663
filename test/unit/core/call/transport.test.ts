/**
 * src/core/call/transport.ts: a call started, run by ky and answered, and ky's `fetch` wrapper that
 * sees each attempt once, over the harness of test/helpers/transport-harness.ts. Asserted: what
 * a successful call returns and the metadata it reports, an attempt abandoned at its timeout,
 * and that neither the api key nor an access token reaches a thrown error or a log line.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { inspect } from 'node:util';
import { type CallSpec } from '../../../../src/core/call/call-spec.js';
import { accountNumberRedactor } from '../../../../src/core/redact.js';
import { InvalidRequestError } from '../../../../src/core/errors/base.js';
import { ConnectionError } from '../../../../src/core/errors/service.js';
import {
  START,
  MERCHANT_ID,
  API_KEY,
  RETRY,
  json,
  failure,
  success,
  fetchFailed,
  hang,
  harness,
  status,
  withdraw,
  rejection,
} from '../../../helpers/transport-harness.js';

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
    expect(h.api().map((request) => request.headers.get('authorization'))).toEqual([
      'Bearer at_1.eyJtIjoiTTEwMDEifQ.s1',
      'Bearer at_1.eyJtIjoiTTEwMDEifQ.s1',
    ]);
  });

  it('reports the attempts, the whole duration (waits included) and the last answer of a call that succeeded after a retry', async () => {
    const h = harness({
      steps: [
        failure(503, 'NO_GATEWAY_AVAILABLE', 'no gateway', { 'x-correlation-id': 'corr-a' }),
        success({ ok: 1 }, { 'x-correlation-id': 'corr-b' }),
      ],
      latencyMs: 30,
    });
    const result = await h.transport.call(status());

    expect(h.delays).toEqual([100]);
    expect(result.response).toMatchObject({
      status: 200,
      correlationId: 'corr-b',
      attempts: 2,
      durationMs: 30 + 100 + 30,
    });
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

describe('an attempt', () => {
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
    const h = harness({
      tokenSteps: [failure(401, 'INVALID_CREDENTIALS', `api_key ${API_KEY} is not valid for ${MERCHANT_ID}`)],
    });
    const error = await rejection(h.transport.call(status()));

    expect(error.code).toBe('INVALID_CREDENTIALS');
    expect(error.message).toContain('[redacted]');
    expect(printed(error)).not.toContain(API_KEY);
    expect(h.logLines.length).toBeGreaterThan(0);
    expect(h.logLines.join('\n')).not.toContain(API_KEY);
  });

  it.each<[string, (token: string) => Response, () => CallSpec]>([
    [
      'a 403 on a status lookup',
      (token) => failure(403, 'MERCHANT_LOCKED', `locked; token ${token}, key ${API_KEY}`),
      () => status(),
    ],
    [
      'a 502 on a withdrawal (wrapped in OutcomeUnknownError)',
      (token) => failure(502, 'GATEWAY_ERROR', `upstream saw ${token} / ${API_KEY}`),
      () => withdraw(),
    ],
    [
      'a 401 that ends the call after renewal',
      (token) => failure(401, 'UNAUTHORIZED', `bad bearer ${token} for ${API_KEY}`),
      () => status(),
    ],
  ])(
    'the access token and the api key echoed in %s reach neither the thrown error nor a log line',
    async (_name, answer, spec) => {
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
    },
  );

  it("masks a withdrawal's account number the service echoed back, as the call's own redaction asks", async () => {
    const h = harness({ then: () => failure(400, 'INVALID_BANK_CODE', 'bank MBBEMYKL cannot pay 5140123456789') });
    const error = await rejection(
      h.transport.call({ ...withdraw('WD6001'), redact: accountNumberRedactor('5140123456789') }),
    );

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
