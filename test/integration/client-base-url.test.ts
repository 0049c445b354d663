/**
 * Issue 15: a wrong `baseUrl` (no `/api/v1`, a query or a fragment) is named as a
 * configuration problem, never read as "payment not found".
 */
import type { ServerResponse } from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import {
  ConfigurationError,
  MemoryRateLimiter,
  MemoryTokenStore,
  MyrGateway,
  NotFoundError,
  OutcomeUnknownError,
} from '../../src/index.js';
import { json, listen, readBody, service } from '../helpers/real-server.js';
import { caught, paymentParams } from '../helpers/client.js';

const API_KEY = 'sk_live_base_url_secret_0001';
let closeServer: (() => Promise<void>) | undefined;
afterEach(async () => {
  await closeServer?.();
  closeServer = undefined;
});

function client(baseUrl: string) {
  return new MyrGateway({
    baseUrl,
    merchantId: 'M_BASEURL',
    apiKey: API_KEY,
    allowInsecureLoopback: true,
    maxRetries: 0,
    tokenStore: new MemoryTokenStore(),
    rateLimiter: new MemoryRateLimiter(),
  });
}

/** A service mounted under /api/v1 only; anything else answers like a bare web server (404, no JSON). */
async function serviceUnderApiV1(bareNotFound: (res: ServerResponse) => void) {
  const paths: string[] = [];
  const server = await listen(async (req, res) => {
    await readBody(req);
    paths.push(String(req.url));
    if (req.url === '/api/v1/auth/token') return json(res, 200, service.token());
    if (req.url?.startsWith('/api/v1/payment/status/'))
      return json(res, 404, { status: 'error', error: 'NOT_FOUND', message: 'No payment matches this identifier' });
    if (req.url?.startsWith('/api/v1/payment/request')) return bareNotFound(res);
    bareNotFound(res);
  });
  closeServer = server.close;
  return { url: server.url, paths };
}

describe('a baseUrl without /api/v1', () => {
  it.each([
    ['an empty 404', (res: ServerResponse) => res.writeHead(404).end()],
    [
      'an HTML 404',
      (res: ServerResponse) => res.writeHead(404, { 'content-type': 'text/html' }).end('<html>Cannot POST</html>'),
    ],
    ['a JSON 404 that is not the service envelope', (res: ServerResponse) => json(res, 404, { message: 'Not Found' })],
    [
      "the service's own NOT_FOUND envelope on /auth/token",
      (res: ServerResponse) => json(res, 404, { status: 'error', error: 'NOT_FOUND', message: 'No such endpoint' }),
    ],
  ])(
    '%s is a ConfigurationError that says to check baseUrl and names the URL that answered',
    async (_label, answer) => {
      const { url } = await serviceUnderApiV1(answer);
      const error = await caught(client(url).payments.create(paymentParams()));
      expect(error).toBeInstanceOf(ConfigurationError);
      expect(error).not.toBeInstanceOf(NotFoundError);
      expect(error.code).toBe('INVALID_CONFIGURATION');
      expect(error.field).toBe('baseUrl');
      expect(error.status).toBe(404);
      expect(error.message).toContain('/api/v1');
      expect(error.message).toContain(`${url}/auth/token`);
      expect(error.message).not.toContain(API_KEY);
    },
  );

  it('a bare 404 from a money endpoint is a ConfigurationError, not "payment not found" (no lookup reads it as such)', async () => {
    const { url, paths } = await serviceUnderApiV1((res) => res.writeHead(404).end());
    const error = await caught(client(`${url}/api/v1`).payments.create(paymentParams()));
    expect(error).toBeInstanceOf(ConfigurationError);
    expect(error.message).toContain(`${url}/api/v1/payment/request`);
    expect(error).not.toBeInstanceOf(OutcomeUnknownError);
    expect(paths.filter((p) => p.includes('/payment/status/'))).toEqual([]);
  });

  it("the service's own NOT_FOUND for a status lookup stays a NotFoundError", async () => {
    const { url } = await serviceUnderApiV1((res) => res.writeHead(404).end());
    const error = await caught(client(`${url}/api/v1`).payments.retrieve('NOSUCHORDER1'));
    expect(error).toBeInstanceOf(NotFoundError);
    expect(error.code).toBe('NOT_FOUND');
  });
});

describe('a baseUrl with whitespace or a control character', () => {
  it.each([
    'https://api.gate\tway.example/api/v1',
    'https://api.gateway.example/api/v1\n',
    ' https://api.gateway.example/api/v1',
  ])('%j is refused at construction', (baseUrl) => {
    expect(() => new MyrGateway({ baseUrl, merchantId: 'M1', apiKey: API_KEY })).toThrow(
      /baseUrl must not contain spaces, control or invisible characters/,
    );
  });
});

describe('a baseUrl with a query or a fragment', () => {
  it.each([
    'https://api.gateway.example/api/v1?tenant=a',
    'https://api.gateway.example/api/v1#top',
    'https://api.gateway.example/api/v1?',
  ])('%s is refused at construction, before any request', (baseUrl) => {
    let sent = 0;
    const fetch = async () => {
      sent += 1;
      return new Response('{}');
    };
    expect(() => new MyrGateway({ baseUrl, merchantId: 'M1', apiKey: API_KEY, fetch })).toThrow(ConfigurationError);
    expect(() => new MyrGateway({ baseUrl, merchantId: 'M1', apiKey: API_KEY, fetch })).toThrow(/query|fragment/);
    expect(sent).toBe(0);
  });
});
