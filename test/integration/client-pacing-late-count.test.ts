/**
 * Issue 33: a cold burst from one process over real HTTPS to the mock served from another
 * process, which counts each creation on arrival or up to a second late (a queue in front of
 * its counter). A slot frees a window after the service counted its request, which is before
 * its answer arrived, however late the count: at most one 429; counted on arrival, the burst
 * within 1.2× the ideal. (Counted late, the burst's time is the bench's figure, docs/benchmarks.md.)
 */
import { afterAll, describe, expect, it } from 'vitest';
import { MemoryRateLimiter, MemoryTokenStore, MyrGateway } from '../../src/index.js';
import { paymentParams } from '../helpers/client.js';
import { type RateMockProcess, startRateMockProcess } from '../helpers/rate-mock-process.js';

const LIMIT = 30;
const WINDOW_MS = 6000;
/** The shortest time 90 creations at 30 per window can take: the third 30 start two windows after the first. */
const IDEAL_MS = (Math.ceil(90 / LIMIT) - 1) * WINDOW_MS;
const MERCHANT = { merchantId: 'MERCHANT_LATE_COUNT', apiKey: 'sk_test_late_count' };
/** Issue 33: at most one 429 (the edge probe's, if refused), within 1.2× the ideal, counted on arrival and on a skewed clock. */
const MAX_REFUSED = 1;
const MAX_RATIO = 1.2;
/**
 * Counted up to a second late, each window waits for the answers of the last (a request's slot
 * frees a window after its answer: the client cannot tell a late count from a slow answer), so the
 * burst takes 17–18.5 s (docs/benchmarks.md, "Issue 33"), not within issue 33's 1.2× + the delay.
 * This bound catches a pacer that waits a whole window more.
 */
const MAX_LATE_RATIO = 1.75;

const services: RateMockProcess[] = [];
afterAll(async () => {
  await Promise.all(services.map((s) => s.stop()));
});

async function burst(service: RateMockProcess, skewMs = 0) {
  const started = performance.now();
  // Each creation's send and answer times and rate headers: a failed bound prints them, so a
  // rare run that meets more 429s than it may says which window's slots were reused early.
  const trace: string[] = [];
  const traced: typeof fetch = async (input, init) => {
    const sentAt = performance.now() - started;
    const response = await fetch(input, init);
    if (String(input instanceof Request ? input.url : input).includes('/payment/request')) {
      const header = (name: string) => response.headers.get(name) ?? '-';
      trace.push(
        `${Math.round(sentAt)}→${Math.round(performance.now() - started)} ms ${response.status} remaining ${header('x-ratelimit-remaining')} reset ${header('x-ratelimit-reset')} retry-after ${header('retry-after')} date ${header('date')} at ${Date.now()}`,
      );
    }
    return response;
  };
  const gateway = new MyrGateway({
    baseUrl: service.baseUrl,
    ...MERCHANT,
    fetch: traced,
    tokenStore: new MemoryTokenStore(),
    rateLimiter: new MemoryRateLimiter(),
    now: () => Date.now() + skewMs,
  });
  const results = await Promise.allSettled(Array.from({ length: 90 }, () => gateway.payments.create(paymentParams())));
  const elapsed = performance.now() - started;
  const creates = await service.creates();
  const refused = creates.filter((s) => s === 429).length;
  return {
    errors: results.flatMap((r) => (r.status === 'rejected' ? [String(r.reason)] : [])),
    elapsed,
    creates,
    refused,
    /** What a failed bound says: the count, the time, and each creation's timing. */
    told: `${refused} × 429 in ${Math.round(elapsed)} ms\n${trace.join('\n')}`,
  };
}

describe('a cold burst of 90 against 30 per 6 s over HTTPS to another process', () => {
  it('counted on arrival: every creation made, at most one 429, within 1.2× the ideal', async () => {
    const service = await startRateMockProcess({ limit: LIMIT, windowMs: WINDOW_MS, ...MERCHANT });
    services.push(service);
    const { errors, elapsed, creates, refused, told } = await burst(service);

    expect(errors).toEqual([]);
    expect(creates.filter((s) => s === 200)).toHaveLength(90);
    expect(refused, told).toBeLessThanOrEqual(MAX_REFUSED);
    expect(elapsed, told).toBeLessThan(MAX_RATIO * IDEAL_MS);
  }, 60_000);

  it('counted 200 ms to 1 s after arrival: every creation made, at most one 429, no window waited twice', async () => {
    const service = await startRateMockProcess({
      limit: LIMIT,
      windowMs: WINDOW_MS,
      ...MERCHANT,
      latencyMs: 200,
      jitterMs: 800,
    });
    services.push(service);
    const { errors, elapsed, creates, refused, told } = await burst(service);

    expect(errors).toEqual([]);
    expect(creates.filter((s) => s === 200)).toHaveLength(90);
    expect(refused, told).toBeLessThanOrEqual(MAX_REFUSED);
    expect(elapsed, told).toBeLessThan(MAX_LATE_RATIO * IDEAL_MS);
  }, 60_000);
});

describe("a process clock that disagrees with the service's (assumption A24)", () => {
  // The client's wall clock, from which it reads X-RateLimit-Reset, is off by 3 s; the service
  // (another process) keeps the machine's. Pacing follows what the answers say of the service's clock.
  it.each([
    ['3 s ahead', 3000],
    ['3 s behind', -3000],
  ])(
    '%s: a cold burst of 90 against 30 per 6 s meets at most one 429, within 1.2× the ideal',
    async (_how, skewMs) => {
      const service = await startRateMockProcess({ limit: LIMIT, windowMs: WINDOW_MS, ...MERCHANT });
      services.push(service);
      const { errors, elapsed, creates, refused, told } = await burst(service, skewMs);

      expect(errors).toEqual([]);
      expect(creates.filter((s) => s === 200)).toHaveLength(90);
      expect(refused, told).toBeLessThanOrEqual(MAX_REFUSED);
      expect(elapsed, told).toBeLessThan(MAX_RATIO * IDEAL_MS);
    },
    60_000,
  );
});

describe('the edge probe never lands on a call that cannot retry', () => {
  // 10 per 2.5 s: not whole seconds, so the edge probe (a whole-second window after a lone
  // answer) arrives before the edge and is refused. The burst starts 50 ms into a second, so the
  // lone request is sent and answered within one and the probe is planned (client-pacing-cold.test.ts).
  const intoNextSecond = (ms: number) => new Promise((resolve) => setTimeout(resolve, 1000 - (Date.now() % 1000) + ms));
  const probed = (maxRetries: (i: number) => number | undefined) => async () => {
    const service = await startRateMockProcess({ limit: 10, windowMs: 2500, ...MERCHANT });
    services.push(service);
    const gateway = new MyrGateway({
      baseUrl: service.baseUrl,
      ...MERCHANT,
      tokenStore: new MemoryTokenStore(),
      rateLimiter: new MemoryRateLimiter(),
    });
    await gateway.payments.retrieve('PAYWARMUP').catch(() => undefined); // the token, so the burst starts on time
    await intoNextSecond(50);
    const results = await Promise.allSettled(
      Array.from({ length: 40 }, (_, i) => {
        const retries = maxRetries(i);
        return gateway.payments.create(paymentParams(), retries === undefined ? {} : { maxRetries: retries });
      }),
    );
    return {
      errors: results.flatMap((r) => (r.status === 'rejected' ? [String(r.reason)] : [])),
      creates: await service.creates(),
    };
  };

  it('every call with maxRetries: 0: no probe is sent, no call is refused', async () => {
    const { errors, creates } = await probed(() => 0)();
    expect(errors).toEqual([]);
    expect(creates.filter((s) => s === 429)).toEqual([]);
    expect(creates.filter((s) => s === 200)).toHaveLength(40);
  }, 60_000);

  it('calls with maxRetries: 0 beside calls that can retry: the probe goes to one that can, and only it may meet the 429', async () => {
    const { errors, creates } = await probed((i) => (i % 2 === 0 ? 0 : undefined))();
    expect(errors).toEqual([]);
    expect(creates.filter((s) => s === 429).length).toBeLessThanOrEqual(1);
    expect(creates.filter((s) => s === 200)).toHaveLength(40);
  }, 60_000);
});
