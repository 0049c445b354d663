import { request as httpRequest } from 'node:http';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createMockGateway, type MockHttpServer } from '../../src/testing/index.js';
import { call, deposit, getToken, withdrawal } from '../helpers/mock-http.js';

// No msw here: the mock is reached over a real socket on 127.0.0.1.
const mock = createMockGateway();
let server: MockHttpServer;

beforeAll(async () => {
  server = await mock.serve();
});
afterEach(() => mock.reset());
afterAll(async () => {
  await server.close();
});

describe('mock.serve(): the same mock over real HTTP', () => {
  it('listens on 127.0.0.1 with the base path and answers like the msw handlers', async () => {
    expect(server.baseUrl).toBe(`http://127.0.0.1:${server.port}/api/v1`);
    const token = await getToken({ ...mock, baseUrl: server.baseUrl });
    const res = await call(server, 'POST', '/payment/request', { token, body: deposit() });
    expect(res.status).toBe(200);
    expect(res.headers.get('x-ratelimit-limit')).toBe('100');
    expect(res.body.data.payment_id).toMatch(/^PAY_/);
    expect(mock.getPayment(res.body.data.payment_id)?.status).toBe('PROCESSING');
    expect(mock.requests.map((r) => [r.endpoint, r.path, r.status])).toEqual([
      ['auth', '/auth/token', 200],
      ['payment.create', '/payment/request', 200],
    ]);
  });

  it("an 'after' networkError stores the withdrawal and then destroys the connection", async () => {
    const token = await getToken({ ...mock, baseUrl: server.baseUrl });
    const body = withdrawal();
    mock.fault({ endpoint: 'withdraw', when: 'after', response: { type: 'networkError' } });
    // node:http shows what fetch hides: the socket closed without an answer.
    const error = await new Promise<NodeJS.ErrnoException>((resolve, reject) => {
      const req = httpRequest(
        `${server.baseUrl}/payment/withdraw`,
        { method: 'POST', headers: { 'Content-Type': 'application/json', Authorization: `Bearer ${token}` } },
        () => reject(new Error('expected no response')),
      );
      req.on('error', resolve);
      req.end(JSON.stringify(body));
    });
    expect(error.code).toBe('ECONNRESET');
    expect(mock.getWithdrawal(body.reference_id as string)?.status).toBe('PROCESSING');
    const again = await call(server, 'POST', '/payment/withdraw', { token, body });
    expect(again.status).toBe(409);
  });

  it('fetch sees a dropped connection as a TypeError', async () => {
    mock.fault({ endpoint: 'auth', response: { type: 'networkError' } });
    await expect(call(server, 'POST', '/auth/token', { body: {} })).rejects.toThrow(TypeError);
    expect(mock.count('auth')).toBe(1);
  });

  it('serves unknown paths and status lookups', async () => {
    expect((await call(server, 'GET', '/nothing')).status).toBe(404);
    const token = await getToken({ ...mock, baseUrl: server.baseUrl });
    expect((await call(server, 'GET', '/payment/status/NONE1', { token })).body.error).toBe('NOT_FOUND');
  });
});
