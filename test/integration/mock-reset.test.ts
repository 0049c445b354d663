// mock.reset() between tests of one file keeps a module-scope client working: the mock keeps
// the tokens it issued, and a `when: 'after'` fault waits for a request that passed
// authentication (a request refused with 401 does not spend it).
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { MemoryTokenStore, MyrGateway } from '../../src/index.js';
import { createMockGateway } from '../../src/testing/index.js';
import { extractSnippets } from '../docs/snippets.js';
import { call, getToken, withdrawal } from '../helpers/mock-http.js';

const root = fileURLToPath(new URL('../..', import.meta.url));
const mock = createMockGateway();

beforeAll(() => mock.listen());
afterEach(() => mock.reset());
afterAll(() => mock.close());

describe('the payouts sample of docs/testing.md', () => {
  it('is examples/merchant-test/payouts.test.ts verbatim (that file runs in npm test)', () => {
    const doc = readFileSync(`${root}docs/testing.md`, 'utf8');
    const sample = extractSnippets('docs/testing.md', doc).find((s) => s.code.startsWith('// payouts.test.ts\n'));
    expect(sample, 'docs/testing.md has a ```ts block starting with // payouts.test.ts').toBeDefined();
    expect(readFileSync(`${root}examples/merchant-test/payouts.test.ts`, 'utf8')).toBe(`${sample?.code}\n`);
  });
});

describe('mock.reset()', () => {
  it('keeps the tokens it issued: a token from before the reset still authenticates', async () => {
    const token = await getToken(mock);
    mock.reset();
    const lookup = await call(mock, 'GET', '/payment/status/NOSUCHREF1', { token });
    expect(lookup.status).toBe(404);
    expect(lookup.body.error).toBe('NOT_FOUND');
  });

  it('a client at module scope makes no extra token request after a reset', async () => {
    const gateway = new MyrGateway({ baseUrl: mock.baseUrl, ...mock.merchant, tokenStore: new MemoryTokenStore() });
    await expect(gateway.payments.retrieve('NOSUCHREF2')).rejects.toMatchObject({ code: 'NOT_FOUND' });
    mock.reset();
    await expect(gateway.payments.retrieve('NOSUCHREF3')).rejects.toMatchObject({ code: 'NOT_FOUND' });
    expect(mock.requests.map((r) => `${r.endpoint} ${r.status}`)).toEqual(['payment.status 404']);
  });

  it('still forgets payments, faults and recordings', async () => {
    const token = await getToken(mock);
    await call(mock, 'POST', '/payment/withdraw', { token, body: withdrawal() });
    mock.fault({ endpoint: 'withdraw', response: { type: 'status', status: 502 } });
    mock.reset();
    expect(mock.withdrawals).toEqual([]);
    expect(mock.requests).toEqual([]);
    expect((await call(mock, 'POST', '/payment/withdraw', { token, body: withdrawal() })).status).toBe(200);
  });

  it('keeps expired tokens expired', async () => {
    const token = await getToken(mock);
    mock.expireTokens();
    mock.reset();
    const lookup = await call(mock, 'GET', '/payment/status/NOSUCHREF4', { token });
    expect(lookup.body.error).toBe('TOKEN_EXPIRED');
  });
});

describe("a when: 'after' fault", () => {
  it('is not spent on a request refused with 401: the next authenticated request takes it', async () => {
    mock.fault({ endpoint: 'withdraw', when: 'after', response: { type: 'networkError' } });
    const refused = await call(mock, 'POST', '/payment/withdraw', { token: 'mock_at_unknown', body: withdrawal() });
    expect(refused.status).toBe(401);
    const token = await getToken(mock);
    const body = withdrawal();
    await expect(call(mock, 'POST', '/payment/withdraw', { token, body })).rejects.toThrow(TypeError);
    expect(mock.getWithdrawal(body.reference_id as string)?.status).toBe('PROCESSING');
    expect(mock.requests.map((r) => `${r.endpoint} ${r.status}`)).toEqual(['withdraw 401', 'auth 200', 'withdraw 0']);
  });

  it('is not spent on a token request with wrong credentials', async () => {
    mock.fault({ endpoint: 'auth', when: 'after', response: { type: 'status', status: 502 } });
    const wrong = await call(mock, 'POST', '/auth/token', {
      body: { merchant_id: mock.merchant.merchantId, api_key: 'sk_test_wrong' },
    });
    expect(wrong.status).toBe(401);
    const right = await call(mock, 'POST', '/auth/token', {
      body: { merchant_id: mock.merchant.merchantId, api_key: mock.merchant.apiKey },
    });
    expect(right.status).toBe(502);
  });

  it('is not spent on a request refused with 403 (merchant disabled)', async () => {
    const token = await getToken(mock);
    mock.fault({ endpoint: 'payment.status', when: 'after', response: { type: 'status', status: 502 } });
    mock.setMerchantStatus(mock.merchant.merchantId, 'DISABLED');
    expect((await call(mock, 'GET', '/payment/status/NOSUCHREF5', { token })).status).toBe(403);
    mock.setMerchantStatus(mock.merchant.merchantId, 'ACTIVE');
    expect((await call(mock, 'GET', '/payment/status/NOSUCHREF5', { token })).status).toBe(502);
    expect((await call(mock, 'GET', '/payment/status/NOSUCHREF5', { token })).status).toBe(404);
  });

  it('is not spent on a request refused with 429 (rate limit)', async () => {
    // The mock's own clock: the window frees its slot when the test says, however slow the machine.
    let clock = Date.now();
    const limited = createMockGateway({ rateLimits: { other: 1 }, rateLimitWindowMs: 200, now: () => clock });
    const served = await limited.serve();
    try {
      const auth = await call(served, 'POST', '/auth/token', {
        body: { merchant_id: limited.merchant.merchantId, api_key: limited.merchant.apiKey },
      });
      const token = auth.body.data.access_token as string;
      expect((await call(served, 'GET', '/payment/status/NOSUCHREF6', { token })).status).toBe(404);
      limited.fault({ endpoint: 'payment.status', when: 'after', response: { type: 'status', status: 502 } });
      expect((await call(served, 'GET', '/payment/status/NOSUCHREF6', { token })).status).toBe(429);
      clock += 250; // the window frees its slot
      expect((await call(served, 'GET', '/payment/status/NOSUCHREF6', { token })).status).toBe(502);
    } finally {
      await served.close();
    }
  });

  it("a 'before' fault still answers any request, authenticated or not", async () => {
    mock.fault({ endpoint: 'withdraw', response: { type: 'status', status: 503 } });
    const answer = await call(mock, 'POST', '/payment/withdraw', { token: 'mock_at_unknown', body: withdrawal() });
    expect(answer.status).toBe(503);
  });
});
