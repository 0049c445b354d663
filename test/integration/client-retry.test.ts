import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { AbortError, RateLimitError, ServiceUnavailableError, TimeoutError } from '../../src/index.js';
import { wait as realSleep } from '../../src/core/wait.js';
import { seededRandom } from '../helpers/seeded-random.js';
import { createMockGateway } from '../../src/testing/index.js';
import { caught, clientFor, paymentParams } from '../helpers/client.js';
import { captureConsoleWarn, MANY_CLIENTS_WARNING } from '../helpers/warnings.js';

const mock = createMockGateway();
beforeAll(() => mock.listen());
afterEach(() => mock.reset());
afterAll(() => mock.close());
// Each test builds a client of its own (a fresh token cache): past the 20th, the process warns
// once that clients should be reused. Expected here: captured, and checked by the last test.
const consoleWarnings = captureConsoleWarn();

describe('retries with backoff', () => {
  it('retries 5xx with delays of 1 s, 2 s, 4 s plus jitter, 3 retries by default', async () => {
    const jitter = [0.5, 0.25, 0.999];
    const { gateway, delays } = clientFor(mock, { random: () => jitter.shift() ?? 0 });
    await gateway.payments.create(paymentParams()); // token cached, no waits so far
    expect(delays).toEqual([]);
    mock.fault({
      endpoint: 'payment.status',
      times: 4,
      response: { type: 'status', status: 503, code: 'NO_GATEWAY_AVAILABLE' },
    });
    const error = await caught(gateway.payments.retrieve('ANYTHING'));
    expect(error).toBeInstanceOf(ServiceUnavailableError);
    expect(error.code).toBe('NO_GATEWAY_AVAILABLE');
    expect(error.retryable).toBe(true);
    expect(mock.count('payment.status')).toBe(4);
    expect(delays).toEqual([1000 + 500, 2000 + 250, 4000 + 999]);
  });

  it('jitter is random: two runs wait different times', async () => {
    const runs: number[][] = [];
    for (let i = 0; i < 2; i++) {
      // Two generators of different seeds: two runs that draw the same millisecond cannot happen.
      const { gateway, delays } = clientFor(mock, { random: seededRandom(i + 1) });
      mock.fault({ endpoint: 'payment.create', response: { type: 'status', status: 502, code: 'GATEWAY_ERROR' } });
      await gateway.payments.create(paymentParams());
      runs.push([...delays]);
    }
    expect(runs[0]?.[0]).toBeGreaterThanOrEqual(1000);
    expect(runs[0]?.[0]).toBeLessThan(2000);
    expect(runs[0]?.[0]).not.toBe(runs[1]?.[0]);
  });

  it('recovers when a retry succeeds', async () => {
    const { gateway, delays } = clientFor(mock);
    mock.fault({
      endpoint: 'payment.create',
      times: 2,
      response: { type: 'status', status: 504, code: 'GATEWAY_TIMEOUT' },
    });
    const payment = await gateway.payments.create(paymentParams());
    expect(payment.status).toBe('PROCESSING');
    expect(delays).toEqual([1000, 2000]);
  });

  it('honours maxRetries per call and per client', async () => {
    const perCall = clientFor(mock);
    mock.fault({
      endpoint: 'payment.create',
      times: 5,
      response: { type: 'status', status: 502, code: 'GATEWAY_ERROR' },
    });
    await caught(perCall.gateway.payments.create(paymentParams(), { maxRetries: 1 }));
    expect(mock.count('payment.create')).toBe(2);
    mock.reset();
    const perClient = clientFor(mock, { maxRetries: 0 });
    mock.fault({
      endpoint: 'payment.create',
      times: 5,
      response: { type: 'status', status: 502, code: 'GATEWAY_ERROR' },
    });
    await caught(perClient.gateway.payments.create(paymentParams()));
    expect(mock.count('payment.create')).toBe(1);
  });

  // Retry-After: 0 used to mean an immediate retry (a hot loop for a crowd); it gets the backoff floor.
  it.each([
    ['seconds', 3, 3000],
    ['zero seconds', 0, 1000],
  ])('prefers Retry-After in %s over backoff, never below the backoff floor', async (_label, retryAfter, expected) => {
    const { gateway, delays } = clientFor(mock);
    mock.fault({ endpoint: 'payment.create', response: { type: 'rateLimit', retryAfter } });
    await gateway.payments.create(paymentParams());
    expect(delays).toEqual([expected]);
  });

  it('understands Retry-After as an HTTP date', async () => {
    const fixedNow = Date.parse('2026-11-22T10:00:00Z');
    const { gateway, delays } = clientFor(mock, { now: () => fixedNow });
    mock.fault({
      endpoint: 'payment.status',
      response: { type: 'rateLimit', retryAfter: new Date(fixedNow + 9000).toUTCString() },
    });
    await caught(gateway.payments.retrieve('NOPE'));
    expect(delays).toEqual([9000]);
  });

  it.each(['envelope', 'nest'] as const)('understands the %s 429 body', async (shape) => {
    const { gateway } = clientFor(mock, { maxRetries: 0 });
    mock.fault({ endpoint: 'payment.create', response: { type: 'rateLimit', retryAfter: 2, shape } });
    const error = await caught(gateway.payments.create(paymentParams()));
    expect(error).toBeInstanceOf(RateLimitError);
    expect(error.code).toBe('RATE_LIMITED');
    expect(error.status).toBe(429);
    expect(error.retryable).toBe(true);
    expect(error.retryAfter).toBe(2);
    expect(typeof error.correlationId).toBe('string');
    expect((error.correlationId as string).length).toBeGreaterThan(0);
  });

  it('falls back to backoff when a 429 has neither Retry-After nor X-RateLimit-Reset', async () => {
    const { gateway, delays } = clientFor(mock);
    mock.fault({ endpoint: 'payment.create', response: { type: 'status', status: 429, code: 'RATE_LIMITED' } });
    await gateway.payments.create(paymentParams());
    expect(delays).toEqual([1000]);
  });

  // Lock-step retries after a 429 were half of the storm in issue 8: without Retry-After the
  // reset says when the window frees, and the crowd is spread over a quarter of that wait.
  it('waits for X-RateLimit-Reset when a 429 has no Retry-After, spread by jitter', async () => {
    const fixedNow = Date.parse('2026-11-22T10:00:00Z');
    const { gateway, delays } = clientFor(mock, { now: () => fixedNow, random: () => 0.5, rateLimiter: false });
    const headers = {
      'X-RateLimit-Limit': '100',
      'X-RateLimit-Remaining': '0',
      'X-RateLimit-Reset': String(fixedNow / 1000 + 8),
    };
    mock.fault({
      endpoint: 'payment.create',
      response: { type: 'status', status: 429, code: 'RATE_LIMITED', headers },
    });
    await gateway.payments.create(paymentParams());
    expect(delays).toEqual([8000 + 1000]);
  });

  it('ends the call instead of waiting for a Retry-After beyond maxDelayMs', async () => {
    const { gateway, delays } = clientFor(mock, { retry: { maxDelayMs: 10_000 } });
    mock.fault({ endpoint: 'payment.create', response: { type: 'rateLimit', retryAfter: 3600 } });
    const error = await caught(gateway.payments.create(paymentParams()));
    expect(error.code).toBe('RATE_LIMITED');
    expect(error.retryAfter).toBe(3600);
    expect(delays).toEqual([]);
  });

  it('retries an HTML error page from a proxy', async () => {
    const { gateway } = clientFor(mock);
    mock.fault({ endpoint: 'payment.status', response: { type: 'html', status: 502 } });
    const created = await gateway.payments.create(paymentParams());
    const status = await gateway.payments.retrieve(created.payment_id);
    expect(status.payment_id).toBe(created.payment_id);
    expect(mock.count('payment.status')).toBe(2);
  });

  it.each([
    [400, 'VALIDATION_ERROR'],
    [404, 'NOT_FOUND'],
    [409, 'DUPLICATE_REFERENCE'],
    [422, 'VALIDATION_ERROR'],
  ])('never retries a %i', async (status, code) => {
    const { gateway, delays } = clientFor(mock);
    mock.fault({ endpoint: 'payment.create', response: { type: 'status', status, code } });
    const error = await caught(gateway.payments.create(paymentParams()));
    expect(error.status).toBe(status);
    expect(error.retryable).toBe(false);
    expect(mock.count('payment.create')).toBe(1);
    expect(delays).toEqual([]);
  });

  it('an aborted signal stops a pending backoff at once', async () => {
    const controller = new AbortController();
    // The abort comes once the 30 s backoff has begun, however long the token and the first attempt took.
    const sleep = (ms: number, signal?: AbortSignal) => {
      const pending = realSleep(ms, signal);
      setTimeout(() => controller.abort(), 50);
      return pending;
    };
    const { gateway } = clientFor(mock, { sleep, retry: { baseDelayMs: 30_000, jitterMs: 0 } });
    mock.fault({
      endpoint: 'payment.create',
      times: 3,
      response: { type: 'status', status: 503, code: 'NO_GATEWAY_AVAILABLE' },
    });
    const started = performance.now();
    const error = await caught(gateway.payments.create(paymentParams(), { signal: controller.signal }));
    expect(error).toBeInstanceOf(AbortError);
    expect(error.code).toBe('ABORTED');
    expect(performance.now() - started).toBeLessThan(5_000);
    expect(mock.count('payment.create')).toBe(1);
  });

  it('an already aborted signal sends nothing', async () => {
    const { gateway } = clientFor(mock);
    const error = await caught(gateway.payments.create(paymentParams(), { signal: AbortSignal.abort() }));
    expect(error.code).toBe('ABORTED');
    expect(mock.count()).toBe(0);
  });

  it('times out a slow attempt and retries it', async () => {
    const { gateway } = clientFor(mock);
    await gateway.payments.create(paymentParams());
    mock.fault({ endpoint: 'payment.status', response: { type: 'delay', ms: 2_000 } });
    const created = mock.requests.find((r) => r.endpoint === 'payment.create');
    const status = await gateway.payments.retrieve((created?.body as { reference_id: string }).reference_id, {
      timeout: 100,
    });
    expect(status.status).toBe('PROCESSING');
    expect(mock.count('payment.status')).toBe(2);
  });

  it('the total timeout bounds all attempts and waits together', async () => {
    const { gateway } = clientFor(mock, { sleep: realSleep, retry: { baseDelayMs: 50, jitterMs: 0 } });
    mock.fault({ endpoint: 'payment.status', times: 10, response: { type: 'delay', ms: 1_000 } });
    const started = performance.now();
    const error = await caught(gateway.payments.retrieve('SLOW1', { timeout: 5_000, totalTimeout: 300 }));
    expect(error).toBeInstanceOf(TimeoutError);
    expect(error.code).toBe('TIMEOUT');
    expect(performance.now() - started).toBeLessThan(3_000);
  });
});

it('printed no warning but the one about the 20+ clients these tests create', () => {
  expect(consoleWarnings.lines).toEqual([expect.stringMatching(MANY_CLIENTS_WARNING)]);
});
