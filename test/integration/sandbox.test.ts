/**
 * The sandbox in-process (no browser): fault options,
 * the refusals that keep other sites away from it, failed deliveries on the real schedule
 * (shortened), the command line's flag checks and api key rules. `--data` is in sandbox-data.test.ts.
 */
import { createServer, request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { banner, main, parseCommand } from '../../src/sandbox/command.js';
import { MyrGateway } from '../../src/index.js';
import { createSandbox } from '../../src/sandbox/server.js';
import { closeSandboxesAfterEach, deposit, sandboxClient, startSandbox } from '../helpers/sandbox.js';

closeSandboxesAfterEach();
const start = startSandbox;
const client = sandboxClient;

/** A raw request, to set Host and Origin headers fetch would not let us set. */
function raw(port: number, path: string, headers: Record<string, string>, method = 'GET', body = ''): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path, method, headers }, (res) => {
      res.resume();
      resolve(res.statusCode ?? 0);
    });
    req.on('error', reject);
    req.end(body);
  });
}

describe('fault options', () => {
  it('--fail-rate answers 502 GATEWAY_ERROR before processing: the client cannot know that, so it reports the outcome unknown, and nothing was created', async () => {
    const rolls = [0.9, 0.1]; // token passes, the create fails
    const sandbox = await start({ failRate: 0.5, random: () => rolls.shift() ?? 0.9 });
    const gateway = new MyrGateway({
      baseUrl: sandbox.baseUrl,
      ...sandbox.merchant,
      allowInsecureLoopback: true,
      maxRetries: 0,
    });
    // A 502 may come after processing, and a lookup that finds nothing proves nothing (issue 7).
    await expect(gateway.payments.create(deposit('FAULT1'))).rejects.toMatchObject({
      code: 'OUTCOME_UNKNOWN',
      status: 502,
      referenceId: 'FAULT1',
    });
    expect(sandbox.service.getPayment('FAULT1')).toBeUndefined();
    expect(sandbox.service.count('payment.create')).toBe(0);
  });

  it('--count-delay counts each request against the rate limit that long after it arrives, and answers after that', async () => {
    const sandbox = await start({ rateLimitCountDelay: { latencyMs: 400 } });
    const started = performance.now();
    const answer = await fetch(`${sandbox.baseUrl}/auth/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ merchant_id: sandbox.merchant.merchantId, api_key: sandbox.merchant.apiKey }),
    });
    expect(answer.status).toBe(200);
    expect(answer.headers.get('x-ratelimit-remaining')).toBe('4');
    expect(performance.now() - started).toBeGreaterThanOrEqual(400);
  });

  it('refuses impossible fault options with a message naming the option', async () => {
    await expect(createSandbox({ rateLimitCountDelay: { latencyMs: -1 } })).rejects.toThrow(
      /rateLimitCountDelay.latencyMs/,
    );
    await expect(createSandbox({ failRate: 1.5 })).rejects.toThrow(/failRate must be a number from 0 to 1/);
    await expect(createSandbox({ latencyMs: -1 })).rejects.toThrow(/latencyMs/);
    await expect(createSandbox({ callbackUrl: 'ftp://x' })).rejects.toThrow(/callbackUrl/);
  });

  it('refuses a latencyMs a timer cannot hold (every answer would wait 1 ms, not the latency asked)', async () => {
    await expect(createSandbox({ latencyMs: 3e9 })).rejects.toThrow(
      new RangeError('latencyMs must be a whole number of milliseconds from 0 to 2147483647'),
    );
  });
});

describe('withdrawals', () => {
  it('finds a withdrawal by its reference_id on the status endpoint, as the payouts worker asks (A6)', async () => {
    const gateway = client(await start());
    const params = {
      amount: '250.00',
      reference_id: 'PAYOUT1',
      bank_code: 'PBBEMYKL',
      account_number: '5140123456789',
      account_name: 'Tan Wei Ming',
    };
    const created = await gateway.withdrawals.create(params);
    await expect(gateway.payments.retrieve('PAYOUT1')).resolves.toMatchObject({
      payment_id: created.payment_id,
      reference_id: 'PAYOUT1',
      status: 'PROCESSING',
    });
    await expect(gateway.payments.retrieve('PAYOUT2')).rejects.toMatchObject({ code: 'NOT_FOUND' });
  });
});

describe('only its own pages drive it', () => {
  it('refuses another Host (DNS rebinding) and a form post from another origin; escapes what the URL carries', async () => {
    const sandbox = await start();
    expect(await raw(sandbox.port, '/', { Host: `evil.example:${sandbox.port}` })).toBe(421);
    const form = { Host: `127.0.0.1:${sandbox.port}`, 'Content-Type': 'application/x-www-form-urlencoded' };
    expect(
      await raw(sandbox.port, '/actions/refund', { ...form, Origin: 'http://evil.example' }, 'POST', 'id=PAY_1'),
    ).toBe(403);
    expect(
      await raw(sandbox.port, '/actions/refund', { ...form, 'Sec-Fetch-Site': 'cross-site' }, 'POST', 'id=PAY_1'),
    ).toBe(403);
    const page = await fetch(`${sandbox.origin}/pay/%3Cscript%3Ealert(1)%3C%2Fscript%3E`);
    expect(page.status).toBe(404);
    const text = await page.text();
    expect(text).toContain('&lt;script&gt;alert(1)&lt;/script&gt;');
    expect(text).not.toContain('<script>alert(1)');
  });
});

describe('its API answers only its own pages and programs', () => {
  /** A raw API request: status, content type and parsed body. */
  function api(
    port: number,
    path: string,
    headers: Record<string, string>,
    body = '',
  ): Promise<{ status: number; type: string; body: unknown }> {
    return new Promise((resolve, reject) => {
      const req = request(
        {
          host: '127.0.0.1',
          port,
          path: `/api/v1${path}`,
          method: body ? 'POST' : 'GET',
          headers: { Host: `127.0.0.1:${port}`, ...headers },
        },
        (res) => {
          let text = '';
          res.on('data', (chunk: Buffer) => (text += chunk.toString()));
          res.on('end', () =>
            resolve({
              status: res.statusCode ?? 0,
              type: String(res.headers['content-type']),
              body: JSON.parse(text) as unknown,
            }),
          );
        },
      );
      req.on('error', reject);
      req.end(body);
    });
  }
  const credentials = JSON.stringify({ merchant_id: 'MERCHANT_SANDBOX', api_key: 'sk_sandbox_local_key_0001' });
  const json = { 'Content-Type': 'application/json' };

  it('refuses a request from another site with 403 in the error envelope, before the service sees it', async () => {
    const sandbox = await start();
    for (const headers of [
      { ...json, Origin: 'http://evil.example' },
      { ...json, Origin: 'http://localhost:3000' }, // the developer's own app on another port is another origin
      { ...json, Origin: 'null' },
      { ...json, 'Sec-Fetch-Site': 'cross-site' },
    ]) {
      const answer = await api(sandbox.port, '/auth/token', headers, credentials);
      expect(answer).toMatchObject({ status: 403, body: { status: 'error', error: 'CROSS_SITE_REQUEST' } });
      expect(answer.type).toMatch(/^application\/json/);
      expect((answer.body as { message: string }).message).toMatch(/other site/);
    }
    expect((await api(sandbox.port, '/payment/status/PAY_1', { Origin: 'http://evil.example' })).status).toBe(403);
    expect(sandbox.service.count('auth')).toBe(0);
  });

  it('refuses a body that is not application/json with 415, so a page cannot post text/plain blind', async () => {
    const sandbox = await start();
    for (const type of [
      'text/plain',
      'application/x-www-form-urlencoded',
      'multipart/form-data; boundary=x',
      'application/jsonp',
    ]) {
      const answer = await api(sandbox.port, '/auth/token', { 'Content-Type': type }, credentials);
      expect(answer).toMatchObject({ status: 415, body: { status: 'error', error: 'UNSUPPORTED_MEDIA_TYPE' } });
    }
    expect((await api(sandbox.port, '/auth/token', {}, credentials)).status).toBe(415);
    expect(sandbox.service.count('auth')).toBe(0);
  });

  it('still answers its own origin, a program that sends no Origin, and JSON with a charset', async () => {
    const sandbox = await start();
    for (const headers of [
      { ...json, Origin: sandbox.origin },
      { ...json, Origin: `http://localhost:${sandbox.port}`, 'Sec-Fetch-Site': 'same-origin' },
      { 'Content-Type': 'application/json; charset=utf-8' },
    ]) {
      expect((await api(sandbox.port, '/auth/token', headers, credentials)).status).toBe(200);
    }
    await client(sandbox).payments.create(deposit('OWNAPI1'));
    expect(sandbox.service.getPayment('OWNAPI1')?.status).toBe('PROCESSING');
  });
});

describe('callbacks', () => {
  let receiver: Server | undefined;
  afterEach(() => receiver?.close());

  it('a merchant that keeps failing gets all three attempts, each with its answer and time, and the log says failed', async () => {
    const answers: number[] = [];
    receiver = createServer((req, res) => {
      req.resume();
      answers.push(answers.length);
      res.writeHead(500).end('handler crashed');
    });
    await new Promise<void>((done) => receiver?.listen(0, '127.0.0.1', done));
    const url = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/cb`;
    const sandbox = await start({ callbackUrl: url, retryDelaysMs: [5, 10] });
    const created = await client(sandbox).payments.create(deposit('RETRY1'));
    const status = await raw(
      sandbox.port,
      `/pay/${created.payment_id}/outcome`,
      {
        Host: `127.0.0.1:${sandbox.port}`,
        'Content-Type': 'application/x-www-form-urlencoded',
        Origin: sandbox.origin,
      },
      'POST',
      'outcome=pay',
    );
    expect(status).toBe(303);
    await expect.poll(() => sandbox.service.getPayment('RETRY1')?.status).toBe('SUCCESS');
    await expect.poll(() => answers.length).toBe(3);
    const live = await (await fetch(`${sandbox.origin}/live`)).text();
    await expect
      .poll(
        async () =>
          (await (await fetch(`${sandbox.origin}/live`)).text()).match(/HTTP 500<\/strong> in \d+ ms/g)?.length,
      )
      .toBe(3);
    expect(live).toContain('handler crashed');
    await expect
      .poll(async () => (await (await fetch(`${sandbox.origin}/live`)).text()).includes('data-state="failed"'))
      .toBe(true);
  });
});

describe('driven from a script, as docs/sandbox.md shows', () => {
  let receiver: Server | undefined;
  afterEach(() => receiver?.close());

  it('pays with POST /pay/<id>/outcome and resends with POST /actions/resend: plain form posts, no browser, no Origin', async () => {
    const bodies: string[] = [];
    receiver = createServer((req, res) => {
      let body = '';
      req.on('data', (chunk: Buffer) => (body += chunk.toString()));
      req.on('end', () => {
        bodies.push(body);
        res.writeHead(200).end('{"ok":true}');
      });
    });
    await new Promise<void>((done) => receiver?.listen(0, '127.0.0.1', done));
    const sandbox = await start({ callbackUrl: `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/cb` });
    const created = await client(sandbox).payments.create(deposit('SCRIPTED1'));
    const form = { 'Content-Type': 'application/x-www-form-urlencoded' };
    const post = (path: string, body: string) =>
      fetch(`${sandbox.origin}${path}`, { method: 'POST', headers: form, body, redirect: 'manual' });

    expect((await post(`/pay/${created.payment_id}/outcome`, 'outcome=pay')).status).toBe(303);
    await expect.poll(() => bodies.length).toBe(1);
    expect((await post('/actions/resend', `id=${created.payment_id}`)).status).toBe(303);
    await expect.poll(() => bodies.length).toBe(2);
    const [first, again] = bodies.map((body): unknown => JSON.parse(body));
    expect(first).toMatchObject({ payment_id: created.payment_id, status: 'SUCCESS' });
    expect(again).toMatchObject({ payment_id: created.payment_id, status: 'SUCCESS' });
    expect(Reflect.get(Object(again), 'webhook_id')).not.toBe(Reflect.get(Object(first), 'webhook_id'));
  });
});

describe('command line', () => {
  it('reads every flag, and refuses bad values with a message naming the flag', () => {
    expect(
      parseCommand(
        [
          'sandbox',
          '--port',
          '4010',
          '--merchant-id',
          'SHOP1',
          '--api-key',
          'sk_test_k',
          '--callback-url',
          'http://127.0.0.1:3000/cb',
          '--data',
          'x.json',
          '--latency',
          '250',
          '--fail-rate',
          '0.1',
        ],
        {},
      ),
    ).toEqual({
      help: false,
      options: {
        port: 4010,
        merchantId: 'SHOP1',
        apiKey: 'sk_test_k',
        callbackUrl: 'http://127.0.0.1:3000/cb',
        dataFile: 'x.json',
        latencyMs: 250,
        failRate: 0.1,
      },
    });
    expect(parseCommand(['--help'])).toEqual({ help: true });
    expect(parseCommand(['sandbox', '--count-delay', '200', '--count-jitter', '800'], {})).toEqual({
      help: false,
      options: { rateLimitCountDelay: { latencyMs: 200, jitterMs: 800 } },
    });
    expect(() => parseCommand(['sandbox', '--count-jitter', '1.5'])).toThrow(
      /--count-jitter must be whole milliseconds from 0 to 60000/,
    );
    expect(() => parseCommand(['sandbox', '--fail-rate', '2'])).toThrow(/--fail-rate must be a number from 0 to 1/);
    expect(() => parseCommand(['sandbox', '--port', 'abc'])).toThrow(/--port/);
    expect(() => parseCommand(['sandbox', '--callback-url', 'javascript:alert(1)'])).toThrow(/--callback-url/);
    expect(() => parseCommand(['serve'])).toThrow(/unknown command: serve/);
    expect(() => parseCommand(['sandbox', '--nope'])).toThrow(/nope/);
  });
});

describe('api keys', () => {
  /** Runs the command with stderr captured; only for runs that refuse before starting. */
  async function refused(argv: string[], env: NodeJS.ProcessEnv = {}): Promise<{ code: number; stderr: string }> {
    let stderr = '';
    const write = vi.spyOn(process.stderr, 'write').mockImplementation((chunk) => {
      stderr += String(chunk);
      return true;
    });
    try {
      return { code: await main(argv, env), stderr };
    } finally {
      write.mockRestore();
    }
  }

  it('refuses a key that is not a sandbox or test key, naming the prefixes and the way out', async () => {
    for (const argv of [['sandbox', '--api-key', 'sk_live_9f8e7d'], ['sandbox']]) {
      const env = argv.length === 1 ? { MYR_SANDBOX_API_KEY: 'live_key_from_env' } : {};
      const { code, stderr } = await refused(argv, env);
      expect(code).toBe(2);
      expect(stderr).toMatch(/must start with sk_sandbox_ or sk_test_/);
      expect(stderr).toContain('--allow-any-key');
    }
    expect(() => parseCommand(['sandbox', '--api-key', 'pk_whatever'])).toThrow(/sk_sandbox_ or sk_test_/);
    expect(parseCommand(['sandbox', '--api-key', 'pk_whatever', '--allow-any-key'])).toMatchObject({
      options: { apiKey: 'pk_whatever' },
    });
    expect(parseCommand(['sandbox', '--api-key', 'sk_test_abc'])).toMatchObject({ options: { apiKey: 'sk_test_abc' } });
  });

  it('reads the key from MYR_SANDBOX_API_KEY, so it is not on the command line; --api-key wins', () => {
    expect(parseCommand(['sandbox'], { MYR_SANDBOX_API_KEY: 'sk_test_from_env' })).toMatchObject({
      options: { apiKey: 'sk_test_from_env' },
    });
    expect(
      parseCommand(['sandbox', '--api-key', 'sk_test_flag'], { MYR_SANDBOX_API_KEY: 'sk_test_env' }),
    ).toMatchObject({ options: { apiKey: 'sk_test_flag' } });
    expect(parseCommand(['sandbox'], {})).toEqual({ help: false, options: {} });
  });

  it("prints the derived signing key only for the sandbox's own key, never for a key the user supplied", async () => {
    const own = await start();
    expect(banner(own, {})).toContain(own.signingKeyHex);
    const options = { apiKey: 'sk_test_merchant_secret_4821' };
    const supplied = await start(options);
    const printed = banner(supplied, options);
    expect(printed).not.toContain(supplied.signingKeyHex);
    expect(printed).not.toContain('sk_test_merchant_secret_4821');
    expect(printed).toMatch(/API key\s+sk_test_…4821/);
  });
});
