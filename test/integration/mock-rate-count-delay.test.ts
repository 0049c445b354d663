/**
 * The mock's `rateLimitCountDelay`: a request is counted against the rate limit when the delay
 * ends, not when it arrives, so the window, the headers and the 429 follow the counting order.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { createMockGateway, type MockGateway, type MockHttpServer } from '../../src/testing/index.js';
import { call, deposit } from '../helpers/mock-http.js';

async function tokenOf(mock: MockGateway, baseUrl: string): Promise<string> {
  const answer = await call({ baseUrl }, 'POST', '/auth/token', {
    body: { merchant_id: mock.merchant.merchantId, api_key: mock.merchant.apiKey },
  });
  return answer.body.data.access_token as string;
}

let server: MockHttpServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

describe('rateLimitCountDelay', () => {
  it('a request that arrived first but is counted last is the one refused, and the answers come after the count', async () => {
    // Draws for: the token request, the first creation (counted 600 ms late), the second (at once).
    const draws = [0, 1, 0];
    const mock = createMockGateway({
      rateLimits: { paymentRequest: 1 },
      rateLimitWindowMs: 60_000,
      rateLimitCountDelay: { latencyMs: 0, jitterMs: 600, random: () => draws.shift() ?? 0 },
    });
    server = await mock.serve();
    const token = await tokenOf(mock, server.baseUrl);
    const sentAt = performance.now();
    const first = call({ baseUrl: server.baseUrl }, 'POST', '/payment/request', { token, body: deposit() }).then(
      (a) => ({ ...a, ms: performance.now() - sentAt }),
    );
    await new Promise((resolve) => setTimeout(resolve, 100));
    const second = await call({ baseUrl: server.baseUrl }, 'POST', '/payment/request', { token, body: deposit() });
    const late = await first;

    expect(second.status).toBe(200);
    expect(second.headers.get('x-ratelimit-remaining')).toBe('0');
    expect(late.status).toBe(429);
    expect(late.ms).toBeGreaterThanOrEqual(600);
    expect(mock.requests.filter((r) => r.endpoint === 'payment.create').map((r) => r.status)).toEqual([429, 200]);
  });

  it('counted on arrival without the option: the first to arrive is the one accepted', async () => {
    const mock = createMockGateway({ rateLimits: { paymentRequest: 1 } });
    server = await mock.serve();
    const token = await tokenOf(mock, server.baseUrl);
    const first = await call({ baseUrl: server.baseUrl }, 'POST', '/payment/request', { token, body: deposit() });
    const second = await call({ baseUrl: server.baseUrl }, 'POST', '/payment/request', { token, body: deposit() });
    expect([first.status, second.status]).toEqual([200, 429]);
  });

  it('refuses a delay out of range when the mock is created', () => {
    expect(() => createMockGateway({ rateLimitCountDelay: { latencyMs: -1 } })).toThrow(TypeError);
  });
});
