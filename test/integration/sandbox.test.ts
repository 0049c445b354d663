/**
 * The sandbox in-process (no browser): `--data` persistence across restarts, fault options,
 * the refusals that keep other sites away from it, failed deliveries on the real schedule
 * (shortened), and the command line's flag checks.
 */
import { lstatSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { createServer, request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { MyrGateway } from '../../src/index.js';
import { banner, main, parseCommand } from '../../src/sandbox/command.js';
import { createSandbox, type Sandbox } from '../../src/sandbox/server.js';

const open: Array<{ close(): Promise<void> }> = [];
afterEach(async () => {
  for (const item of open.splice(0)) await item.close();
});

async function start(options: Parameters<typeof createSandbox>[0] = {}): Promise<Sandbox> {
  const sandbox = await createSandbox(options);
  open.push(sandbox);
  return sandbox;
}

const client = (sandbox: Sandbox) => new MyrGateway({ baseUrl: sandbox.baseUrl, ...sandbox.merchant, allowInsecureLoopback: true });

const deposit = (reference: string) => ({
  amount: 42.1,
  reference_id: reference,
  customer_name: 'Aisyah',
  customer_phone: '60123456789',
  payment_method: 'QR_PAYMENT' as const,
});

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

describe('--data', () => {
  it('keeps payments, their QR payload and deliveries across a restart, with pages moved to the new port', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'myr-sandbox-data-'));
    const file = join(dir, 'sandbox.json');
    try {
      const first = await createSandbox({ dataFile: file });
      const created = await client(first).payments.create(deposit('KEEP1'));
      const delivery = await first.service.completePayment(created.payment_id, 'FAILED'); // no callback URL: logged, nothing sent
      expect(delivery.url).toBeNull();
      await first.close();

      const second = await createSandbox({ dataFile: file });
      const kept = second.service.getPayment('KEEP1');
      expect(kept?.status).toBe('FAILED');
      expect(kept?.qr_data_string).toBe(created.gateway.qr_data_string);
      expect(kept?.payment_url).toBe(`${second.origin}/pay/${created.payment_id}`);
      const status = await client(second).payments.retrieve('KEEP1');
      expect(status.status).toBe('FAILED');
      const dashboard = await (await fetch(`${second.origin}/`)).text();
      expect(dashboard).toContain(created.payment_id);
      expect(dashboard).toContain('no callback URL');
      await second.close();
      expect(readdirSync(dir)).toEqual(['sandbox.json']); // the temporary file was renamed, not left behind
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('refuses a file that is not its own and leaves it untouched', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'myr-sandbox-data-'));
    const file = join(dir, 'orders.json');
    try {
      writeFileSync(file, '{"orders":[1,2,3]}');
      await expect(createSandbox({ dataFile: file })).rejects.toThrow(/not a sandbox data file/);
      writeFileSync(file, '{"version":1,');
      await expect(createSandbox({ dataFile: file })).rejects.toThrow(/not valid JSON/);
      expect(readFileSync(file, 'utf8')).toBe('{"version":1,');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

/** A data file as the sandbox writes it: a deposit, a withdrawal, a token, a delivery. */
function validData() {
  const deposit = {
    payment_id: 'PAY_226B9329B3E217E96E0403EA', merchantId: 'MERCHANT_SANDBOX', reference_id: 'G1', amount: 149.9, currency: 'MYR',
    status: 'SUCCESS', gateway_reference: 'GW72CB6F5DA73179EE', created_at: '2026-11-24T03:00:24.167Z', completed_at: '2026-11-24T03:00:24.187Z',
    kind: 'DEPOSIT', payment_method: 'BANK_TRANSFER', customer_name: 'A', customer_phone: '601', callback_url: null, redirect_url: null,
    metadata: { provider_channel_id: 'MB2U0227' }, payment_url: 'http://127.0.0.1:43299/pay/PAY_226B9329B3E217E96E0403EA',
    gateway_redirect_url: 'http://127.0.0.1:43299/bank/PAY_226B9329B3E217E96E0403EA', qr_data_string: null, expires_at: '2026-11-24T03:15:24.167Z',
  };
  const withdrawal = {
    payment_id: 'WD_0D1BE57C25CC1526F889A1C6', merchantId: 'MERCHANT_SANDBOX', reference_id: 'G2', amount: 250, currency: 'MYR',
    status: 'PROCESSING', gateway_reference: null, created_at: '2026-11-24T03:00:24.185Z', completed_at: null,
    kind: 'WITHDRAWAL', method: 'BANK', bank_code: 'PBBEMYKL', account_number: '5140123456789', account_name: 'S',
  };
  const token = { token: 'mock_at_41c16ac8a05570b89ca761d587fb6a5dcae0a7ca60cd510c', merchantId: 'MERCHANT_SANDBOX', expiresAt: 1795492824152, revoked: false };
  const delivery = {
    webhook_id: '060e382b-2683-4d08-8983-21fd4a716f3a', payment_id: deposit.payment_id, reference_id: 'G1', transaction_type: 'DEPOSIT',
    status: 'SUCCESS', url: 'http://127.0.0.1:9/cb', started_at: 1795489224188,
    attempts: [{ error: 'TypeError: fetch failed', at: 1795489224189, durationMs: 0 }, { status: 200, at: 1795489225189, durationMs: 3, responseBody: 'ok' }],
    state: 'delivered', body: { webhook_id: '060e382b-2683-4d08-8983-21fd4a716f3a', payment_id: deposit.payment_id, status: 'SUCCESS' },
  };
  return { version: 1, records: [deposit, withdrawal] as Array<Record<string, unknown> | null>, tokens: [token] as unknown[], deliveries: [delivery] as unknown[] };
}

describe('--data file safety', () => {
  let dir: string;
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('loads a valid file; writes never follow a symlink planted where the temporary file used to go', async () => {
    dir = mkdtempSync(join(tmpdir(), 'myr-sandbox-data-'));
    const file = join(dir, 'sandbox.json');
    const victim = join(dir, 'victim.txt');
    writeFileSync(file, JSON.stringify(validData()));
    writeFileSync(victim, 'not yours');
    symlinkSync(victim, `${file}.${process.pid}.tmp`);
    const sandbox = await createSandbox({ dataFile: file });
    expect(sandbox.service.getPayment('G1')?.status).toBe('SUCCESS');
    await sandbox.close();
    expect(readFileSync(victim, 'utf8')).toBe('not yours');
    expect(lstatSync(file).isSymbolicLink()).toBe(false);
    expect(JSON.parse(readFileSync(file, 'utf8'))).toMatchObject({ version: 1, records: [{ reference_id: 'G1' }, { reference_id: 'G2' }] });
    expect(readdirSync(dir).sort()).toEqual(['sandbox.json', `sandbox.json.${process.pid}.tmp`, 'victim.txt']);
  });

  const broken: Array<[string, (data: ReturnType<typeof validData>) => void, RegExp]> = [
    ['a null record', (d) => (d.records[0] = null), /records\[0\] is not an object/],
    ['payment_method "__proto__"', (d) => ((d.records[0] as Record<string, unknown>).payment_method = '__proto__'), /records\[0\]\.payment_method .*"__proto__"/],
    ['a string amount', (d) => ((d.records[1] as Record<string, unknown>).amount = '250'), /records\[1\]\.amount/],
    ['a record of unknown kind', (d) => ((d.records[1] as Record<string, unknown>).kind = 'REFUND'), /records\[1\]\.kind/],
    ['a missing field', (d) => delete (d.records[0] as Record<string, unknown>).payment_url, /records\[0\]\.payment_url/],
    ['a field the sandbox never writes', (d) => ((d.records[1] as Record<string, unknown>).isAdmin = true), /records\[1\]\.isAdmin/],
    ['a __proto__ key in metadata', (d) => ((d.records[0] as Record<string, unknown>).metadata = JSON.parse('{"__proto__":{"polluted":1}}')), /records\[0\]\.metadata\.__proto__/],
    ['two records with one payment_id', (d) => d.records.push({ ...(d.records[1] as object), reference_id: 'G3' }), /records\[2\]\.payment_id .*twice/],
    ['a token that is a string', (d) => (d.tokens[0] = 'mock_at_x'), /tokens\[0\]/],
    ['a delivery in an unknown state', (d) => ((d.deliveries[0] as Record<string, unknown>).state = 'lost'), /deliveries\[0\]\.state/],
    ['an attempt without a time', (d) => ((d.deliveries[0] as { attempts: unknown[] }).attempts[1] = { status: 200 }), /deliveries\[0\]\.attempts\[1\]\.at/],
  ];
  it.each(broken)('refuses a file with %s, naming it, and leaves the file byte-identical', async (_, breakIt, problem) => {
    dir = mkdtempSync(join(tmpdir(), 'myr-sandbox-data-'));
    const file = join(dir, 'sandbox.json');
    const data = validData();
    breakIt(data);
    const bytes = `${JSON.stringify(data, null, 1)}\n`;
    writeFileSync(file, bytes);
    const refusal = createSandbox({ dataFile: file });
    await expect(refusal).rejects.toMatchObject({ name: 'SandboxDataError' });
    await expect(refusal).rejects.toThrow(problem);
    expect(readFileSync(file, 'utf8')).toBe(bytes);
    expect(readdirSync(dir)).toEqual(['sandbox.json']);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  it('the command exits non-zero with the problem, not a stack trace', async () => {
    dir = mkdtempSync(join(tmpdir(), 'myr-sandbox-data-'));
    const file = join(dir, 'sandbox.json');
    const data = validData();
    data.records[0] = null;
    writeFileSync(file, JSON.stringify(data));
    let stderr = '';
    const write = vi.spyOn(process.stderr, 'write').mockImplementation((chunk) => {
      stderr += String(chunk);
      return true;
    });
    try {
      expect(await main(['sandbox', '--data', file], {})).toBe(1);
    } finally {
      write.mockRestore();
    }
    expect(stderr).toMatch(/could not start the sandbox: --data .*sandbox\.json: records\[0\] is not an object/);
    expect(stderr).not.toMatch(/\n\s+at /);
  });
});

describe('fault options', () => {
  it('--fail-rate answers 502 GATEWAY_ERROR before processing: the client cannot know that, so it reports the outcome unknown, and nothing was created', async () => {
    const rolls = [0.9, 0.1]; // token passes, the create fails
    const sandbox = await start({ failRate: 0.5, random: () => rolls.shift() ?? 0.9 });
    const gateway = new MyrGateway({ baseUrl: sandbox.baseUrl, ...sandbox.merchant, allowInsecureLoopback: true, maxRetries: 0 });
    // A 502 may come after processing, and a lookup that finds nothing proves nothing (issue 7).
    await expect(gateway.payments.create(deposit('FAULT1'))).rejects.toMatchObject({ code: 'OUTCOME_UNKNOWN', status: 502, referenceId: 'FAULT1' });
    expect(sandbox.service.getPayment('FAULT1')).toBeUndefined();
    expect(sandbox.service.count('payment.create')).toBe(0);
  });

  it('refuses impossible fault options with a message naming the option', async () => {
    await expect(createSandbox({ failRate: 1.5 })).rejects.toThrow(/failRate must be a number from 0 to 1/);
    await expect(createSandbox({ latencyMs: -1 })).rejects.toThrow(/latencyMs/);
    await expect(createSandbox({ callbackUrl: 'ftp://x' })).rejects.toThrow(/callbackUrl/);
  });
});

describe('only its own pages drive it', () => {
  it('refuses another Host (DNS rebinding) and a form post from another origin; escapes what the URL carries', async () => {
    const sandbox = await start();
    expect(await raw(sandbox.port, '/', { Host: `evil.example:${sandbox.port}` })).toBe(421);
    const form = { Host: `127.0.0.1:${sandbox.port}`, 'Content-Type': 'application/x-www-form-urlencoded' };
    expect(await raw(sandbox.port, '/actions/refund', { ...form, Origin: 'http://evil.example' }, 'POST', 'id=PAY_1')).toBe(403);
    expect(await raw(sandbox.port, '/actions/refund', { ...form, 'Sec-Fetch-Site': 'cross-site' }, 'POST', 'id=PAY_1')).toBe(403);
    const page = await fetch(`${sandbox.origin}/pay/%3Cscript%3Ealert(1)%3C%2Fscript%3E`);
    expect(page.status).toBe(404);
    const text = await page.text();
    expect(text).toContain('&lt;script&gt;alert(1)&lt;/script&gt;');
    expect(text).not.toContain('<script>alert(1)');
  });
});

describe('its API answers only its own pages and programs', () => {
  /** A raw API request: status, content type and parsed body. */
  function api(port: number, path: string, headers: Record<string, string>, body = ''): Promise<{ status: number; type: string; body: unknown }> {
    return new Promise((resolve, reject) => {
      const req = request({ host: '127.0.0.1', port, path: `/api/v1${path}`, method: body ? 'POST' : 'GET', headers: { Host: `127.0.0.1:${port}`, ...headers } }, (res) => {
        let text = '';
        res.on('data', (chunk: Buffer) => (text += chunk.toString()));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, type: String(res.headers['content-type']), body: JSON.parse(text) as unknown }));
      });
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
    for (const type of ['text/plain', 'application/x-www-form-urlencoded', 'multipart/form-data; boundary=x', 'application/jsonp']) {
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
    const status = await raw(sandbox.port, `/pay/${created.payment_id}/outcome`, {
      Host: `127.0.0.1:${sandbox.port}`,
      'Content-Type': 'application/x-www-form-urlencoded',
      Origin: sandbox.origin,
    }, 'POST', 'outcome=pay');
    expect(status).toBe(303);
    await expect.poll(() => (sandbox.service.getPayment('RETRY1')?.status)).toBe('SUCCESS');
    await expect.poll(() => answers.length).toBe(3);
    const live = await (await fetch(`${sandbox.origin}/live`)).text();
    await expect.poll(async () => (await (await fetch(`${sandbox.origin}/live`)).text()).match(/HTTP 500<\/strong> in \d+ ms/g)?.length).toBe(3);
    expect(live).toContain('handler crashed');
    await expect.poll(async () => (await (await fetch(`${sandbox.origin}/live`)).text()).includes('data-state="failed"')).toBe(true);
  });
});

describe('command line', () => {
  it('reads every flag, and refuses bad values with a message naming the flag', () => {
    expect(
      parseCommand(['sandbox', '--port', '4010', '--merchant-id', 'SHOP1', '--api-key', 'sk_test_k', '--callback-url', 'http://127.0.0.1:3000/cb', '--data', 'x.json', '--latency', '250', '--fail-rate', '0.1'], {}),
    ).toEqual({
      help: false,
      options: { port: 4010, merchantId: 'SHOP1', apiKey: 'sk_test_k', callbackUrl: 'http://127.0.0.1:3000/cb', dataFile: 'x.json', latencyMs: 250, failRate: 0.1 },
    });
    expect(parseCommand(['--help'])).toEqual({ help: true });
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
    expect(parseCommand(['sandbox', '--api-key', 'pk_whatever', '--allow-any-key'])).toMatchObject({ options: { apiKey: 'pk_whatever' } });
    expect(parseCommand(['sandbox', '--api-key', 'sk_test_abc'])).toMatchObject({ options: { apiKey: 'sk_test_abc' } });
  });

  it('reads the key from MYR_SANDBOX_API_KEY, so it is not on the command line; --api-key wins', () => {
    expect(parseCommand(['sandbox'], { MYR_SANDBOX_API_KEY: 'sk_test_from_env' })).toMatchObject({ options: { apiKey: 'sk_test_from_env' } });
    expect(parseCommand(['sandbox', '--api-key', 'sk_test_flag'], { MYR_SANDBOX_API_KEY: 'sk_test_env' })).toMatchObject({ options: { apiKey: 'sk_test_flag' } });
    expect(parseCommand(['sandbox'], {})).toEqual({ help: false, options: {} });
  });

  it('prints the derived signing key only for the sandbox\'s own key, never for a key the user supplied', async () => {
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
