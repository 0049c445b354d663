/**
 * Faults msw cannot make, on a real HTTP server on 127.0.0.1: a refused connection (nothing
 * sent), and a connection the server drops after reading the whole request.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  ConfigurationError,
  ConnectionError,
  MyrGateway,
  MyrGatewayError,
  OutcomeUnknownError,
  PaymentUrlUnavailableError,
} from '../../src/index.js';
import { caught, paymentParams, recordingSleep, withdrawalParams } from '../helpers/client.js';
import { asListener, closedPortUrl, json, readBody, service } from '../helpers/real-server.js';

type Behaviour = 'ok' | 'drop-after-read' | 'duplicate' | 'huge-error';
let behaviour: Behaviour[] = [];
const received: string[] = [];
let server: Server;
let baseUrl: string;

beforeAll(async () => {
  server = createServer(
    asListener(async (req, res) => {
      const body = await readBody(req);
      const path = req.url ?? '';
      received.push(`${req.method} ${path}`);
      if (path.endsWith('/auth/token')) return json(res, 200, service.token());
      if (path.includes('/payment/status/'))
        return json(res, 200, service.status('PAY_REAL1', path.split('/').pop() ?? '', 120.5));
      const next = behaviour.shift() ?? 'ok';
      if (next === 'drop-after-read') {
        req.socket.destroy(); // the request was read (and, for a real service, maybe acted on); no answer
        return;
      }
      // A broken upstream (or a hostile middlebox) answering with a message of nearly a megabyte
      // (a longer answer is cut as it is read: client-answer-size.test.ts).
      if (next === 'huge-error')
        return json(res, 400, { status: 'error', error: 'VALIDATION_ERROR', message: `bad ${'A'.repeat(1_000_000)}` });
      if (next === 'duplicate')
        return json(res, 409, { status: 'error', error: 'DUPLICATE_REFERENCE', message: 'reference_id already used' });
      const parsed = JSON.parse(body) as { reference_id: string; amount: number };
      if (path.endsWith('/payment/withdraw'))
        return json(res, 200, service.withdrawal('WD_REAL1', parsed.reference_id, parsed.amount));
      return json(res, 200, service.payment('PAY_REAL1', parsed.reference_id, parsed.amount));
    }),
  );
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/api/v1`;
});
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

function client(url = baseUrl) {
  const recorder = recordingSleep();
  const gateway = new MyrGateway({
    baseUrl: url,
    merchantId: 'M1',
    apiKey: 'sk_real_http',
    allowInsecureLoopback: true,
    sleep: recorder.sleep,
    random: () => 0,
  });
  return { gateway, delays: recorder.delays };
}

describe('real HTTP on 127.0.0.1', () => {
  it('works end to end over a real socket', async () => {
    received.length = 0;
    const { gateway } = client();
    const payment = await gateway.payments.create(paymentParams('MOBILE_WALLET'));
    expect(payment.customer_redirect_url).toBe('https://bank.example/PAY_REAL1');
    expect(received).toEqual(['POST /api/v1/auth/token', 'POST /api/v1/payment/request']);
  });

  it('a withdrawal whose connection drops after the server read it is not sent again', async () => {
    received.length = 0;
    const { gateway, delays } = client();
    await gateway.payments.retrieve('WARM1');
    behaviour = ['drop-after-read'];
    const error = await caught(gateway.withdrawals.create(withdrawalParams()));
    expect(error).toBeInstanceOf(OutcomeUnknownError);
    expect(error.cause).toBeInstanceOf(ConnectionError);
    expect(received.filter((line) => line.endsWith('/payment/withdraw'))).toHaveLength(1);
    expect(delays).toEqual([]);
  });

  it('a payment create whose connection dropped is retried and reconciled by reference_id', async () => {
    received.length = 0;
    const { gateway } = client();
    behaviour = ['drop-after-read', 'duplicate'];
    const params = paymentParams();
    const error = await caught(gateway.payments.create(params));
    expect(error).toBeInstanceOf(PaymentUrlUnavailableError);
    expect((error as unknown as PaymentUrlUnavailableError).existingPayment.reference_id).toBe(params.reference_id);
    expect(received.filter((line) => line.endsWith('/payment/request'))).toHaveLength(2);
  });

  it('a refused connection sent nothing, so even a withdrawal is retried, then fails as NETWORK_ERROR', async () => {
    const { gateway, delays } = client(`${await closedPortUrl()}/api/v1`);
    const error = await caught(gateway.withdrawals.create(withdrawalParams()));
    expect(error).toBeInstanceOf(ConnectionError);
    expect(error.code).toBe('NETWORK_ERROR');
    expect(error.retryable).toBe(true);
    expect(error.message).toContain('ECONNREFUSED');
    expect(delays).toEqual([1000, 2000, 4000]);
  });
});

describe('redirects are never followed', () => {
  it('a 308 to another host does not carry the api_key there, and is a non-retryable error', async () => {
    const stolen: string[] = [];
    const thief = createServer((req, res) => {
      stolen.push(`${req.method} ${req.url}`);
      res.end('{}');
    });
    await new Promise<void>((resolve) => thief.listen(0, '127.0.0.1', resolve));
    const thiefUrl = `http://127.0.0.1:${(thief.address() as AddressInfo).port}`;
    const redirector = createServer((req, res) => {
      res.writeHead(308, { location: `${thiefUrl}${req.url ?? '/'}` });
      res.end();
    });
    await new Promise<void>((resolve) => redirector.listen(0, '127.0.0.1', resolve));
    try {
      const { gateway, delays } = client(`http://127.0.0.1:${(redirector.address() as AddressInfo).port}/api/v1`);
      const error = await caught(gateway.payments.create(paymentParams()));
      expect(error.status).toBe(308);
      expect(error.retryable).toBe(false);
      expect(error.message).toContain('redirect');
      expect(stolen).toEqual([]);
      expect(delays).toEqual([]);
    } finally {
      await new Promise<void>((resolve) => thief.close(() => resolve()));
      await new Promise<void>((resolve) => redirector.close(() => resolve()));
    }
  });
});

describe('call options are checked before sending', () => {
  it.each([
    [{ timeout: -1 }, 'timeout'],
    [{ timeout: Number.NaN }, 'timeout'],
    [{ timeout: 2 ** 33 }, 'timeout'],
    [{ totalTimeout: Number.POSITIVE_INFINITY }, 'totalTimeout'],
    [{ maxRetries: -1 }, 'maxRetries'],
    [{ maxRetries: 1.5 }, 'maxRetries'],
  ])('rejects %o', async (options, field) => {
    received.length = 0;
    const { gateway } = client();
    const error = await caught(gateway.payments.retrieve('ORDER1', options));
    expect(error).toBeInstanceOf(MyrGatewayError);
    expect(error.code).toBe('VALIDATION_ERROR');
    expect(error.field).toBe(field);
    expect(received).toEqual([]);
  });

  it.each([{ timeout: 1.5 }, { totalTimeout: 0 }, { maxRetries: 11 }])('the client refuses %o', (options) => {
    expect(
      () => new MyrGateway({ baseUrl: 'https://api.gateway.example/api/v1', merchantId: 'M', apiKey: 'k', ...options }),
    ).toThrow(ConfigurationError);
  });
});

describe('base URL safety', () => {
  it.each([
    ['http://api.gateway.example/api/v1', 'must use https'],
    ['http://127.0.0.1:8080/api/v1', 'allowInsecureLoopback'],
    ['ftp://api.gateway.example/api/v1', 'https'],
    ['not a url', 'absolute URL'],
    ['https://user:pass@api.gateway.example/api/v1', 'credentials'],
  ])('refuses %s', (url, hint) => {
    expect(() => new MyrGateway({ baseUrl: url, merchantId: 'M', apiKey: 'k' })).toThrow(ConfigurationError);
    expect(() => new MyrGateway({ baseUrl: url, merchantId: 'M', apiKey: 'k' })).toThrow(hint);
  });

  it('refuses http:// to a non-loopback host even with the opt-in', () => {
    expect(
      () =>
        new MyrGateway({
          baseUrl: 'http://10.0.0.5/api/v1',
          merchantId: 'M',
          apiKey: 'k',
          allowInsecureLoopback: true,
        }),
    ).toThrow(ConfigurationError);
  });

  // A blank setting is a missing one (`process.env.X ?? ''`): it fails the first call, not the
  // construction, so a module-scope client cannot break a build (client-config-env.test.ts).
  it.each([['merchantId'], ['apiKey']])('requires %s: a blank one fails the first call, naming it', async (field) => {
    const options = { baseUrl: 'https://api.gateway.example/api/v1', merchantId: 'M', apiKey: 'k', [field]: ' ' };
    const error = await new MyrGateway(options).payments.retrieve('ORDER1').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ConfigurationError);
    expect(error).toMatchObject({ field });
  });

  it.each([['merchantId'], ['apiKey']])('refuses a %s that is not a string at construction', (field) => {
    const options = { baseUrl: 'https://api.gateway.example/api/v1', merchantId: 'M', apiKey: 'k', [field]: 42 };
    expect(() => new MyrGateway(options as never)).toThrow(field);
  });

  it('an error body of nearly a megabyte does not become an error message of one (logs, alerts, JSON)', async () => {
    const { gateway } = client();
    behaviour = ['huge-error'];
    const error = await caught(gateway.payments.create(paymentParams()));
    expect(error).toBeInstanceOf(MyrGatewayError);
    expect(error.code).toBe('VALIDATION_ERROR');
    expect(error.message).toMatch(/^VALIDATION_ERROR \(HTTP 400\): bad A/);
    expect(error.message.length).toBeLessThan(2_000);
    expect(JSON.stringify(error).length).toBeLessThan(2_000);
  });
});
