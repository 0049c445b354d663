/**
 * Pacing to the rate limits, through the public client against the mock (issue 8): a burst
 * stays inside the limit it learns from the headers, a call that cannot get a slot in time
 * says so without sending anything, and clients of one merchant share one budget.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { AbortError, MemoryRateLimiter, MemoryTokenStore, MyrGateway, RateLimitError } from '../../src/index.js';
import { createMockGateway, type MockGateway } from '../../src/testing/index.js';
import { caught, paymentParams } from '../helpers/client.js';

let mock: MockGateway | undefined;
afterEach(() => mock?.close());

function start(options: Parameters<typeof createMockGateway>[0]): MockGateway {
  mock = createMockGateway(options);
  mock.listen();
  return mock;
}

function client(m: MockGateway, extra: Partial<ConstructorParameters<typeof MyrGateway>[0]> = {}) {
  return new MyrGateway({
    baseUrl: m.baseUrl,
    merchantId: m.merchant.merchantId,
    apiKey: m.merchant.apiKey,
    tokenStore: new MemoryTokenStore(),
    ...extra,
  });
}

const creates = (m: MockGateway) => m.requests.filter((r) => r.endpoint === 'payment.create');

describe('a burst against a service enforcing its limit', () => {
  // Real time on purpose: pacing is temporal. The window is 2 s, not 60, and the client is
  // told neither: it starts from the published 100 a minute and learns the window from the
  // X-RateLimit-Reset of its first answer.
  it('500 payment creations at 100 per 2 s window: no 429, all 500 created, in about 4 windows', async () => {
    const WINDOW_MS = 2000;
    const m = start({ rateLimits: { paymentRequest: 100 }, rateLimitWindowMs: WINDOW_MS });
    const gateway = client(m, { rateLimiter: new MemoryRateLimiter() });
    const started = performance.now();
    const results = await Promise.allSettled(
      Array.from({ length: 500 }, () => gateway.payments.create(paymentParams())),
    );
    const elapsed = performance.now() - started;

    expect(results.filter((r) => r.status === 'rejected').map((r) => String(r.reason))).toEqual([]);
    expect(creates(m).filter((r) => r.status === 429)).toHaveLength(0);
    expect(creates(m).filter((r) => r.status === 200)).toHaveLength(500);
    expect(m.payments).toHaveLength(500);
    // 500 at 100 a window cannot take less than 4 windows; the reset has whole-second
    // precision, so the learned window may be up to 1 s long: at most 4 × 3 s, plus slack.
    expect(elapsed).toBeGreaterThanOrEqual(4 * WINDOW_MS - 50);
    expect(elapsed).toBeLessThan(4 * (WINDOW_MS + 1000) + 4000);
  }, 30_000);
});

describe('a call that cannot get a slot', () => {
  it('fails at once with RATE_LIMITED saying it was the client pacing itself, and sends nothing', async () => {
    const m = start({ rateLimits: { paymentRequest: 3 } });
    const gateway = client(m, { rateLimiter: new MemoryRateLimiter() });
    for (let i = 0; i < 3; i++) await gateway.payments.create(paymentParams());
    const params = paymentParams();
    const error = await caught(gateway.payments.create(params, { totalTimeout: 5000 }));
    expect(error).toBeInstanceOf(RateLimitError);
    expect(error).toMatchObject({ code: 'RATE_LIMITED', retryable: true, referenceId: params.reference_id });
    expect(error.message).toContain("client's own pacing");
    expect(error.message).toContain('Nothing was sent');
    expect(error.retryAfter).toBeGreaterThan(50);
    expect(creates(m)).toHaveLength(3);
  });

  it('an abort while waiting ends the call with AbortError and sends nothing', async () => {
    const m = start({ rateLimits: { other: 2 } });
    const gateway = client(m, { rateLimiter: new MemoryRateLimiter() });
    const created = await gateway.payments.create(paymentParams());
    await gateway.payments.retrieve(created.payment_id);
    await gateway.payments.retrieve(created.payment_id);
    const controller = new AbortController();
    const waiting = gateway.payments.retrieve(created.payment_id, { signal: controller.signal });
    setTimeout(() => controller.abort(), 20);
    expect(await caught(waiting)).toBeInstanceOf(AbortError);
    expect(m.requests.filter((r) => r.endpoint === 'payment.status')).toHaveLength(2);
  });

  it('rateLimiter: false sends it, and the service answers 429', async () => {
    const m = start({ rateLimits: { paymentRequest: 1 } });
    const gateway = client(m, { rateLimiter: false, maxRetries: 0 });
    await gateway.payments.create(paymentParams());
    const error = await caught(gateway.payments.create(paymentParams()));
    expect(error).toMatchObject({ code: 'RATE_LIMITED', status: 429 });
    expect(creates(m).map((r) => r.status)).toEqual([200, 429]);
  });
});

describe('one budget per merchant', () => {
  it('clients given no rateLimiter share the process budget; a limiter of their own does not', async () => {
    const m = start({ rateLimits: { withdraw: 2 }, baseUrl: 'https://pacing-shared.test/api/v1' });
    const [a, b] = [client(m), client(m)];
    const wd = (n: number) => ({
      amount: 250,
      reference_id: `PACE${Date.now()}${n}`,
      bank_code: 'PBBEMYKL',
      account_number: '5140123456789',
      account_name: 'Tan Wei Ming',
    });
    await a.withdrawals.create(wd(1));
    await b.withdrawals.create(wd(2));
    const error = await caught(a.withdrawals.create(wd(3), { totalTimeout: 2000 }));
    expect(error).toBeInstanceOf(RateLimitError);
    expect(error.message).toContain("client's own pacing");
    expect(m.requests.filter((r) => r.endpoint === 'withdraw')).toHaveLength(2);

    // Its own limiter does not know what the others spent, and meets the service's 429.
    const own = client(m, { rateLimiter: new MemoryRateLimiter(), maxRetries: 0 });
    expect(await caught(own.withdrawals.create(wd(4)))).toMatchObject({ code: 'RATE_LIMITED', status: 429 });
  });
});
