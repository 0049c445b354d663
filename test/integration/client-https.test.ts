/**
 * The client against the mock served over real HTTPS on 127.0.0.1 with a certificate made
 * for this run, the way a merchant reaches the real service.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import net from 'node:net';
import { join } from 'node:path';
import tls from 'node:tls';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConnectionError, MemoryTokenStore, MyrGateway, OutcomeUnknownError, RateLimitError } from '../../src/index.js';
import { createMockGateway, type MockHttpServer } from '../../src/testing/index.js';
import { caught, paymentParams, recordingSleep, withdrawalParams } from '../helpers/client.js';

const mock = createMockGateway();
let server: MockHttpServer;
let dir: string;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'myr-tls-'));
  execFileSync(
    'openssl',
    [
      'req',
      '-x509',
      '-newkey',
      'rsa:2048',
      '-nodes',
      '-days',
      '1',
      '-subj',
      '/CN=127.0.0.1',
      '-addext',
      'subjectAltName=IP:127.0.0.1',
      '-keyout',
      join(dir, 'key.pem'),
      '-out',
      join(dir, 'cert.pem'),
    ],
    { stdio: 'ignore' },
  );
  const cert = readFileSync(join(dir, 'cert.pem'), 'utf8');
  server = await mock.serve({ tls: { key: readFileSync(join(dir, 'key.pem'), 'utf8'), cert } });
  // What NODE_EXTRA_CA_CERTS does at start-up, done for this test process only.
  tls.setDefaultCACertificates([...tls.rootCertificates, cert]);
});
afterAll(async () => {
  await server.close();
  rmSync(dir, { recursive: true, force: true });
});

function client() {
  const recorder = recordingSleep();
  // A token cache per client: the tests reset the mock, which forgets every token it issued.
  const gateway = new MyrGateway({
    baseUrl: server.baseUrl,
    merchantId: mock.merchant.merchantId,
    apiKey: mock.merchant.apiKey,
    sleep: recorder.sleep,
    tokenStore: new MemoryTokenStore(),
  });
  return { gateway, delays: recorder.delays };
}

describe('over real HTTPS', () => {
  it('the base URL is https and needs no opt-in', () => {
    expect(server.baseUrl.startsWith('https://127.0.0.1:')).toBe(true);
  });

  it('creates, retrieves and withdraws', async () => {
    const { gateway } = client();
    const payment = await gateway.payments.create(paymentParams('BANK_TRANSFER'));
    expect(payment.payment_id).toMatch(/^PAY_/);
    expect(payment.customer_redirect_url).toBe(payment.gateway.redirect_url);
    expect((await gateway.payments.retrieve(payment.reference_id)).payment_id).toBe(payment.payment_id);
    const withdrawal = await gateway.withdrawals.create(withdrawalParams());
    expect(withdrawal.status).toBe('PROCESSING');
    expect(mock.count('auth')).toBe(1);
  });

  it('a TLS connection reset after the withdrawal was processed is an unknown outcome, sent once', async () => {
    const { gateway, delays } = client();
    mock.reset();
    const params = withdrawalParams();
    mock.fault({ endpoint: 'withdraw', when: 'after', response: { type: 'networkError' } });
    const error = await caught(gateway.withdrawals.create(params));
    expect(error).toBeInstanceOf(OutcomeUnknownError);
    expect(error.cause).toBeInstanceOf(ConnectionError);
    expect(mock.count('withdraw')).toBe(1);
    expect(mock.getWithdrawal(params.reference_id)).toBeDefined();
    expect(delays).toEqual([]);
  });

  it('refuses a server whose certificate it does not trust', async () => {
    const untrusted = createMockGateway();
    const otherDir = mkdtempSync(join(tmpdir(), 'myr-tls-'));
    execFileSync(
      'openssl',
      [
        'req',
        '-x509',
        '-newkey',
        'rsa:2048',
        '-nodes',
        '-days',
        '1',
        '-subj',
        '/CN=127.0.0.1',
        '-addext',
        'subjectAltName=IP:127.0.0.1',
        '-keyout',
        join(otherDir, 'key.pem'),
        '-out',
        join(otherDir, 'cert.pem'),
      ],
      { stdio: 'ignore' },
    );
    const other = await untrusted.serve({
      tls: { key: readFileSync(join(otherDir, 'key.pem')), cert: readFileSync(join(otherDir, 'cert.pem')) },
    });
    try {
      const recorder = recordingSleep();
      const gateway = new MyrGateway({
        baseUrl: other.baseUrl,
        merchantId: untrusted.merchant.merchantId,
        apiKey: untrusted.merchant.apiKey,
        sleep: recorder.sleep,
        maxRetries: 0,
      });
      const error = await caught(gateway.payments.create(paymentParams()));
      expect(error).toBeInstanceOf(ConnectionError);
      expect(untrusted.count()).toBe(0); // the api_key never left over an untrusted connection
    } finally {
      await other.close();
      rmSync(otherDir, { recursive: true, force: true });
    }
  });
});

/** A certificate made for this run and trusted by nobody. */
function untrustedCertificate(): { key: string; cert: string; remove: () => void } {
  const otherDir = mkdtempSync(join(tmpdir(), 'myr-tls-'));
  execFileSync(
    'openssl',
    [
      'req',
      '-x509',
      '-newkey',
      'rsa:2048',
      '-nodes',
      '-days',
      '1',
      '-subj',
      '/CN=127.0.0.1',
      '-addext',
      'subjectAltName=IP:127.0.0.1',
      '-keyout',
      join(otherDir, 'key.pem'),
      '-out',
      join(otherDir, 'cert.pem'),
    ],
    { stdio: 'ignore' },
  );
  const pair = {
    key: readFileSync(join(otherDir, 'key.pem'), 'utf8'),
    cert: readFileSync(join(otherDir, 'cert.pem'), 'utf8'),
  };
  return { ...pair, remove: () => rmSync(otherDir, { recursive: true, force: true }) };
}

// A TLS handshake that fails proves the request never left: the service cannot "recover" from a
// wrong scheme, host or certificate, so it is not retried, not counted against the 5 token
// requests a minute, never an unknown outcome, and the message says what to check.
describe('a secure connection that cannot be made', () => {
  const SAYS_WHAT_TO_CHECK = /check the scheme, host and certificate/;

  async function sixCallsFail(gateway: MyrGateway, delays: number[], count: () => number) {
    for (let call = 0; call < 6; call++) {
      const error = await caught(gateway.payments.create(paymentParams()));
      expect(error).toBeInstanceOf(ConnectionError);
      expect(error).not.toBeInstanceOf(RateLimitError);
      expect(error.message).toMatch(SAYS_WHAT_TO_CHECK);
      expect(error.retryable).toBe(false);
    }
    expect(delays).toEqual([]); // not one retry
    expect(count()).toBe(0);
  }

  it('a certificate it does not trust: not retried, not counted against the token limit, says what to check', async () => {
    const untrusted = createMockGateway();
    const pair = untrustedCertificate();
    const other = await untrusted.serve({ tls: { key: pair.key, cert: pair.cert } });
    try {
      const recorder = recordingSleep();
      const gateway = new MyrGateway({
        baseUrl: other.baseUrl,
        merchantId: untrusted.merchant.merchantId,
        apiKey: untrusted.merchant.apiKey,
        sleep: recorder.sleep,
        tokenStore: new MemoryTokenStore(),
      });
      await sixCallsFail(gateway, recorder.delays, () => untrusted.count());
    } finally {
      await other.close();
      pair.remove();
    }
  });

  it('https:// to a plain-HTTP port: not retried, not counted against the token limit, says what to check', async () => {
    const plain = createMockGateway();
    const served = await plain.serve();
    try {
      const recorder = recordingSleep();
      const baseUrl = served.baseUrl.replace(/^http:/, 'https:');
      const gateway = new MyrGateway({
        baseUrl,
        merchantId: plain.merchant.merchantId,
        apiKey: plain.merchant.apiKey,
        sleep: recorder.sleep,
        tokenStore: new MemoryTokenStore(),
      });
      await sixCallsFail(gateway, recorder.delays, () => plain.count());
    } finally {
      await served.close();
    }
  });

  it('a withdrawal whose secure connection fails was not sent: a ConnectionError, not OUTCOME_UNKNOWN, and no second attempt', async () => {
    const plain = createMockGateway();
    const served = await plain.serve();
    try {
      const recorder = recordingSleep();
      const baseUrl = served.baseUrl.replace(/^http:/, 'https:');
      // The token comes from the mock over plain HTTP; the withdrawal goes to the same plain port over https://.
      const fetch: typeof globalThis.fetch = (input, init) => {
        const url = input instanceof Request ? input.url : input instanceof URL ? input.href : input;
        return globalThis.fetch(url.endsWith('/auth/token') ? url.replace(/^https:/, 'http:') : url, init);
      };
      const gateway = new MyrGateway({
        baseUrl,
        merchantId: plain.merchant.merchantId,
        apiKey: plain.merchant.apiKey,
        sleep: recorder.sleep,
        tokenStore: new MemoryTokenStore(),
        fetch,
      });
      const error = await caught(gateway.withdrawals.create(withdrawalParams()));
      expect(error).toBeInstanceOf(ConnectionError);
      expect(error).not.toBeInstanceOf(OutcomeUnknownError);
      expect(error.message).toMatch(SAYS_WHAT_TO_CHECK);
      expect(plain.count('auth')).toBe(1);
      expect(plain.count('withdraw')).toBe(0);
      expect(recorder.delays).toEqual([]);
    } finally {
      await served.close();
    }
  });
});

// A server (or a middlebox in front of it) that closes the connection while the TLS handshake is
// under way: Node says so ("disconnected before secure TLS connection was established"), and the
// request, written only after the handshake, never left.
describe('a server that closes the connection during the TLS handshake', () => {
  async function closingServer(): Promise<{ baseUrl: string; connections: () => number; close: () => Promise<void> }> {
    let connections = 0;
    const server = net.createServer((socket) => {
      connections++;
      socket.once('data', () => socket.end()); // the ClientHello arrived: close without answering
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as net.AddressInfo;
    return {
      baseUrl: `https://127.0.0.1:${port}/api/v1`,
      connections: () => connections,
      close: () => new Promise<void>((resolve) => server.close(() => resolve())),
    };
  }

  it('is not sent: not retried, not counted against the token limit, says what to check', async () => {
    const closing = await closingServer();
    try {
      const recorder = recordingSleep();
      const gateway = new MyrGateway({
        baseUrl: closing.baseUrl,
        merchantId: 'MERCHANT_CLOSES',
        apiKey: 'sk_test_closes',
        sleep: recorder.sleep,
        tokenStore: new MemoryTokenStore(),
      });
      for (let call = 0; call < 6; call++) {
        const error = await caught(gateway.payments.create(paymentParams()));
        expect(error).toBeInstanceOf(ConnectionError);
        expect(error).not.toBeInstanceOf(RateLimitError);
        expect(error.message).toMatch(/check the scheme, host and certificate/);
        expect(error.retryable).toBe(false);
      }
      expect(recorder.delays).toEqual([]);
      expect(closing.connections()).toBe(6); // one token attempt per call, none cut by the local limit
    } finally {
      await closing.close();
    }
  });

  it('a withdrawal there is a ConnectionError, not OUTCOME_UNKNOWN, and is not sent again', async () => {
    const closing = await closingServer();
    const plain = createMockGateway();
    const served = await plain.serve();
    try {
      const recorder = recordingSleep();
      // The token comes from the mock; the withdrawal goes to the server that closes in the handshake.
      const fetch: typeof globalThis.fetch = (input, init) => {
        const url = input instanceof Request ? input.url : input instanceof URL ? input.href : input;
        return globalThis.fetch(url.endsWith('/auth/token') ? `${served.baseUrl}/auth/token` : url, init);
      };
      const gateway = new MyrGateway({
        baseUrl: closing.baseUrl,
        merchantId: plain.merchant.merchantId,
        apiKey: plain.merchant.apiKey,
        sleep: recorder.sleep,
        tokenStore: new MemoryTokenStore(),
        fetch,
      });
      const error = await caught(gateway.withdrawals.create(withdrawalParams()));
      expect(error).toBeInstanceOf(ConnectionError);
      expect(error).not.toBeInstanceOf(OutcomeUnknownError);
      expect(error.message).toMatch(/check the scheme, host and certificate/);
      expect(plain.count('auth')).toBe(1);
      expect(closing.connections()).toBe(1);
      expect(recorder.delays).toEqual([]);
    } finally {
      await served.close();
      await closing.close();
    }
  });
});
