/**
 * `npx myr-gateway doctor` against real servers on 127.0.0.1: the sandbox (in-process, and
 * through the bin in a child process) and the mock served over node:http for the answers the
 * sandbox never gives. Nothing here moves money, and the api key never shows in the output.
 */
import { spawn } from 'node:child_process';
import { build } from 'esbuild';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { doctorMain } from '../../src/doctor/command.js';
import { createSandbox, type Sandbox } from '../../src/sandbox/server.js';
import { createMockGateway } from '../../src/testing/index.js';

const root = fileURLToPath(new URL('../..', import.meta.url));
const apiKey = 'sk_sandbox_doctor_key_0001';
const open: Array<{ close(): Promise<void> }> = [];
afterEach(async () => {
  for (const item of open.splice(0)) await item.close();
});

async function sandbox(): Promise<Sandbox> {
  const started = await createSandbox({ merchantId: 'MERCHANT_DOCTOR', apiKey });
  open.push(started);
  return started;
}

function envFor(
  target: { baseUrl: string; merchant: { merchantId: string; apiKey: string } },
  extra: Record<string, string> = {},
) {
  return {
    MYR_GATEWAY_BASE_URL: target.baseUrl,
    MYR_GATEWAY_MERCHANT_ID: target.merchant.merchantId,
    MYR_GATEWAY_API_KEY: target.merchant.apiKey,
    ...extra,
  };
}

async function doctor(
  env: Record<string, string>,
  now?: () => number,
): Promise<{ code: number; out: string; lines: string[] }> {
  let out = '';
  const code = await doctorMain([], {
    env,
    write: (text) => void (out += text),
    writeError: (text) => void (out += text),
    ...(now ? { now } : {}),
  });
  return { code, out, lines: out.split('\n').filter(Boolean) };
}

const line = (lines: string[], check: string) =>
  lines.find((l) => l.slice(6).startsWith(`${check} `)) ?? `(no ${check} line)`;

describe('npx myr-gateway doctor', () => {
  it('passes against the sandbox: one line per check, no money moved, no secret printed', async () => {
    const target = await sandbox();
    const { code, out, lines } = await doctor(
      envFor(target, { MYR_GATEWAY_CALLBACK_URL: 'https://shop.example/webhooks/myr?key=s3cret' }),
    );
    expect(code).toBe(0);
    expect(line(lines, 'configuration')).toMatch(
      /^ok {4}configuration +http:\/\/127\.0\.0\.1:\d+\/api\/v1 as merchant MERCHANT_DOCTOR$/,
    );
    expect(line(lines, 'token')).toMatch(/^ok {4}token /);
    expect(line(lines, 'status lookup')).toMatch(
      /^ok {4}status lookup +GET \/payment\/status\/DOCTOR[0-9A-F]{20} answered 404 NOT_FOUND/,
    );
    expect(line(lines, 'clock')).toMatch(/^ok {4}clock +local clock within \d+ s/);
    expect(line(lines, 'rate limits')).toMatch(
      /^ok {4}rate limits +X-RateLimit-\* headers seen \(limit \d+, remaining \d+\)/,
    );
    expect(line(lines, 'callback URL')).toBe('ok    callback URL   https://shop.example/webhooks/myr is https');
    expect(lines.at(-1)).toBe('doctor: all checks passed');
    expect(target.service.payments).toEqual([]);
    expect(target.service.withdrawals).toEqual([]);
    expect(out).not.toContain(apiKey);
    expect(out).not.toContain('s3cret');
    expect(out).not.toMatch(/mock_at_/);
  });

  it('with a wrong api key fails naming the token check, and prints neither key', async () => {
    const target = await sandbox();
    const wrongKey = 'sk_sandbox_wrong_key_9999';
    const { code, out, lines } = await doctor(envFor(target, { MYR_GATEWAY_API_KEY: wrongKey }));
    expect(code).toBe(1);
    expect(line(lines, 'configuration')).toMatch(/^ok /);
    expect(line(lines, 'token')).toMatch(
      /^FAIL {2}token +no access token: INVALID_CREDENTIALS \(HTTP 401\).*check MYR_GATEWAY_MERCHANT_ID and MYR_GATEWAY_API_KEY$/,
    );
    expect(line(lines, 'status lookup')).toMatch(/^skip /);
    expect(lines.at(-1)).toMatch(/^doctor: failed at "token": no access token: INVALID_CREDENTIALS/);
    expect(out).not.toContain(wrongKey);
    expect(out).not.toContain(apiKey);
  });

  it('over https:// to a plain-HTTP port fails at the token check saying to check the scheme, host and certificate', async () => {
    const mock = createMockGateway();
    const served = await mock.serve();
    open.push(served);
    const target = { baseUrl: served.baseUrl.replace(/^http:/, 'https:'), merchant: mock.merchant };
    const { code, lines } = await doctor(envFor(target));
    expect(code).toBe(1);
    expect(line(lines, 'token')).toMatch(/^FAIL {2}token .*check the scheme, host and certificate/);
    expect(mock.count()).toBe(0);
    // Nothing answered: no claim about the service's headers, and the hint that fits no answer at all.
    expect(line(lines, 'rate limits')).toBe('skip  rate limits    no answer from the service');
    expect(line(lines, 'token')).toMatch(/is MYR_GATEWAY_BASE_URL right and the service reachable\?$/);
  });

  it('without the environment fails naming the configuration check and the missing variables', async () => {
    const { code, lines } = await doctor({ MYR_GATEWAY_BASE_URL: 'https://api.gateway.example/api/v1' });
    expect(code).toBe(1);
    expect(line(lines, 'configuration')).toBe(
      'FAIL  configuration  MYR_GATEWAY_MERCHANT_ID, MYR_GATEWAY_API_KEY not set',
    );
    expect(lines.at(-1)).toMatch(/^doctor: failed at "configuration"/);
  });

  it.each([
    ['a trailing newline', `${apiKey}\n`],
    ['a leading space', ` ${apiKey}`],
  ])(
    'an api key with %s fails the configuration check, naming the variable and the whitespace, as the client does; the key is never printed',
    async (_what, key) => {
      const target = await sandbox();
      const { code, out, lines } = await doctor(envFor(target, { MYR_GATEWAY_API_KEY: key }));
      expect(code).toBe(1);
      expect(line(lines, 'configuration')).toMatch(
        /^FAIL {2}configuration +INVALID_CONFIGURATION: .*MYR_GATEWAY_API_KEY.*whitespace/,
      );
      expect(line(lines, 'token')).toMatch(/^skip /);
      expect(out).not.toContain(apiKey);
      // The client the merchant builds from the same environment says the same.
      const client = await import('../../src/index.js').then(
        ({ MyrGateway }) =>
          () =>
            new MyrGateway({
              baseUrl: target.baseUrl,
              merchantId: target.merchant.merchantId,
              apiKey: key,
              allowInsecureLoopback: true,
            }),
      );
      expect(client).toThrow(/apiKey.*whitespace/);
    },
  );

  it('refuses a plain http base URL that is not loopback, before sending anything', async () => {
    const { code, lines } = await doctor({
      MYR_GATEWAY_BASE_URL: 'http://api.gateway.example/api/v1',
      MYR_GATEWAY_MERCHANT_ID: 'M1',
      MYR_GATEWAY_API_KEY: 'sk_test_x',
    });
    expect(code).toBe(1);
    expect(line(lines, 'configuration')).toMatch(/^FAIL {2}configuration +INVALID_CONFIGURATION: /);
    expect(line(lines, 'token')).toMatch(/^skip /);
  });

  it('fails at the callback URL check for an http:// callback URL off loopback', async () => {
    const target = await sandbox();
    const { code, lines } = await doctor(
      envFor(target, { MYR_GATEWAY_CALLBACK_URL: 'http://shop.example/webhooks/myr' }),
    );
    expect(code).toBe(1);
    expect(lines.at(-1)).toBe(
      'doctor: failed at "callback URL": http://shop.example/webhooks/myr must be https:// (the service refuses any other callback_url)',
    );
  });

  it('warns, without failing, when the local clock is more than 60 s off the Date header', async () => {
    const target = await sandbox();
    const { code, lines } = await doctor(envFor(target), () => Date.now() + 120_000);
    expect(code).toBe(0);
    expect(line(lines, 'clock')).toMatch(/^warn {2}clock +local clock is 1[12]\d s ahead of the service's/);
    expect(lines.at(-1)).toBe('doctor: all checks passed (1 warning)');
  });

  it('fails at the status lookup when the service does not answer NOT_FOUND, and warns without rate-limit headers', async () => {
    const mock = createMockGateway({ rateLimits: false });
    const served = await mock.serve();
    open.push(served);
    mock.fault({
      endpoint: 'payment.status',
      times: Infinity,
      response: { type: 'status', status: 400, code: 'VALIDATION_ERROR' },
    });
    const { code, lines } = await doctor(envFor({ baseUrl: served.baseUrl, merchant: mock.merchant }));
    expect(code).toBe(1);
    expect(line(lines, 'token')).toMatch(/^ok /);
    expect(line(lines, 'status lookup')).toMatch(
      /^FAIL {2}status lookup +GET \/payment\/status\/DOCTOR\w+: VALIDATION_ERROR \(HTTP 400\).*the spec says 404 NOT_FOUND$/,
    );
    expect(line(lines, 'rate limits')).toMatch(/^warn {2}rate limits +no X-RateLimit-\* headers/);
    expect(lines.at(-1)).toMatch(/^doctor: failed at "status lookup"/);
  });

  it('on a 429 from the token endpoint says the limit (5 token requests a minute) and when to retry', async () => {
    const mock = createMockGateway();
    const served = await mock.serve();
    open.push(served);
    mock.fault({ endpoint: 'auth', times: Infinity, response: { type: 'rateLimit', retryAfter: 42 } });
    const { code, lines } = await doctor(envFor({ baseUrl: served.baseUrl, merchant: mock.merchant }));
    expect(code).toBe(1);
    expect(line(lines, 'token')).toMatch(
      /^FAIL {2}token +no access token: RATE_LIMITED \(HTTP 429\).*5 token requests a minute.*retry in 42 s/,
    );
  });

  it('on a 429 without Retry-After says the limit and to wait for the minute to pass', async () => {
    const mock = createMockGateway();
    const served = await mock.serve();
    open.push(served);
    mock.fault({ endpoint: 'auth', times: Infinity, response: { type: 'rateLimit' } });
    const { lines } = await doctor(envFor({ baseUrl: served.baseUrl, merchant: mock.merchant }));
    expect(line(lines, 'token')).toMatch(/5 token requests a minute.*retry in a minute/);
  });

  it('runs as `myr-gateway doctor` from the bin, exiting 0 when healthy and 1 naming the check otherwise', async () => {
    const target = await sandbox();
    const run = (env: Record<string, string>) =>
      new Promise<{ code: number | null; out: string }>((resolve, reject) => {
        const child = spawn(process.execPath, ['--import', 'tsx', 'src/sandbox/cli.ts', 'doctor'], {
          cwd: root,
          env: { PATH: process.env.PATH ?? '', ...env },
          stdio: ['ignore', 'pipe', 'pipe'],
        });
        let out = '';
        child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
        child.stderr.on('data', (chunk: Buffer) => (out += chunk.toString()));
        child.on('error', reject);
        child.on('close', (code) => resolve({ code, out }));
      });
    const healthy = await run(envFor(target));
    expect(healthy.out).toContain('doctor: all checks passed');
    expect(healthy.code).toBe(0);
    const wrong = await run(envFor(target, { MYR_GATEWAY_API_KEY: 'sk_sandbox_wrong_key_9999' }));
    expect(wrong.out).toContain('doctor: failed at "token"');
    expect(wrong.code).toBe(1);
  }, 60_000);

  it('answers --help with its usage and exits 2 on an unknown flag', async () => {
    const writes: string[] = [];
    const io = { env: {}, write: (t: string) => void writes.push(t), writeError: (t: string) => void writes.push(t) };
    expect(await doctorMain(['--help'], io)).toBe(0);
    expect(writes.join('')).toMatch(/^Usage: myr-gateway doctor\n/);
    writes.length = 0;
    expect(await doctorMain(['--verbose'], io)).toBe(2);
    expect(writes.join('')).toMatch(/^myr-gateway doctor: Unknown option '--verbose'/);
  });

  it('is in the bin only: no entry point of the package imports it', async () => {
    const entries = ['src/index.ts', 'src/webhooks/index.ts', 'src/testing/index.ts', 'src/redis/index.ts'];
    const result = await build({
      entryPoints: entries,
      absWorkingDir: root,
      bundle: true,
      write: false,
      metafile: true,
      platform: 'node',
      format: 'esm',
      packages: 'external',
      outdir: 'out',
    });
    const inputs = Object.keys(result.metafile.inputs);
    expect(inputs).toContain('src/client.ts');
    expect(inputs.filter((file) => file.startsWith('src/doctor/'))).toEqual([]);
    const bin = await build({
      entryPoints: ['src/sandbox/cli.ts'],
      absWorkingDir: root,
      bundle: true,
      write: false,
      metafile: true,
      platform: 'node',
      format: 'esm',
      packages: 'external',
      outdir: 'out',
    });
    expect(Object.keys(bin.metafile.inputs)).toContain('src/doctor/command.ts');
  });
});
