/**
 * src/core/call/retry-decision.ts through the transport (test/helpers/transport-harness.ts): which
 * failures are sent again and after what wait, that a money-moving request that may have been
 * processed is never sent again blindly (and that the failure says so), and the token renewal
 * the policy grants after TOKEN_EXPIRED.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { InvalidRequestError, MyrGatewayError } from '../../../../src/core/errors/base.js';
import { OutcomeUnknownError } from '../../../../src/core/errors/outcome.js';
import {
  AuthenticationError,
  DuplicateReferenceError,
  NotFoundError,
  PermissionDeniedError,
  RateLimitError,
  ServiceUnavailableError,
} from '../../../../src/core/errors/service.js';
import {
  RETRY,
  json,
  failure,
  success,
  fetchFailed,
  hang,
  harness,
  status,
  createPayment,
  withdraw,
  rejection,
  type Step,
} from '../../../helpers/transport-harness.js';

afterEach(() => {
  vi.useRealTimers();
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
    const h = harness({
      totalTimeout: 2000,
      then: () => failure(429, 'RATE_LIMITED', 'slow down', { 'retry-after': '5' }),
    });
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
  ])(
    'never sends a payment create again after %i %s, and throws it typed, with the reference_id',
    async (httpStatus, code, type) => {
      const h = harness({ then: () => failure(httpStatus, code, 'no', { 'x-correlation-id': 'corr-4xx' }) });
      const outcome = await h.transport.outcomeOf(createPayment('ORDER2001'));

      expect(h.api()).toHaveLength(1);
      expect(h.sleep).not.toHaveBeenCalled();
      expect(outcome.ok).toBe(false);
      if (outcome.ok) return;
      expect(outcome.maybeProcessed).toBe(false);
      expect(outcome.error).toBeInstanceOf(type);
      expect(outcome.error).toMatchObject({ code, status: httpStatus, correlationId: 'corr-4xx', retryable: false });
    },
  );
});

describe('a money-moving request that may have been processed', () => {
  it.each<[string, () => Step]>([
    ['500', () => failure(500, 'INTERNAL_ERROR', 'boom')],
    ['502 GATEWAY_ERROR', () => failure(502, 'GATEWAY_ERROR', 'bank limit reached')],
    ['504 GATEWAY_TIMEOUT', () => failure(504, 'GATEWAY_TIMEOUT', 'upstream silent')],
    [
      "503 that is not the spec's NO_GATEWAY_AVAILABLE (a proxy's page)",
      () => new Response('<html>503</html>', { status: 503 }),
    ],
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
    const h = harness({
      steps: [failure(502, 'GATEWAY_ERROR'), json(201, { status: 'success', data: { payment_id: 'P9' } })],
    });
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
    const h = harness({
      steps: [fetchFailed('ECONNRESET'), failure(409, 'DUPLICATE_REFERENCE', 'reference_id already used')],
    });
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

describe('a refused token', () => {
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
});
