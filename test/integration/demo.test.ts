// The README's main job must keep working: run the demo exactly as `npm run demo` does.
import { execFile } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { createMockGateway } from '../../src/testing/index.js';

const root = new URL('../..', import.meta.url);

/** Runs a file the way `npx tsx …` does; resolves with its exit code and output, never rejects. */
function runExample(
  file: string,
  args: string[] = [],
  env: NodeJS.ProcessEnv = {},
): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      ['--import', 'tsx', file, ...args],
      {
        cwd: root,
        timeout: 60_000,
        env: { ...process.env, MYR_GATEWAY_BASE_URL: '', MYR_GATEWAY_MERCHANT_ID: '', MYR_GATEWAY_API_KEY: '', ...env },
      },
      (error, stdout, stderr) =>
        resolve({ code: error ? (typeof error.code === 'number' ? error.code : 1) : 0, stdout, stderr }),
    );
  });
}

describe('npm run demo (examples/demo.ts) against the in-process mock', () => {
  it('shows every step of the issue, checks each, and exits 0', async () => {
    const { code, stdout, stderr } = await runExample('examples/demo.ts');
    expect(stderr).not.toMatch(/\n\s+at /); // no stack trace
    expect(stdout).not.toContain('✗');
    expect(stdout).not.toContain('skipped');
    for (const method of ['QR_PAYMENT', 'BANK_TRANSFER', 'MOBILE_WALLET']) {
      expect(stdout).toMatch(new RegExp(`✓ ${method}: the customer is sent to`));
    }
    expect(stdout).toMatch(/customer → https:\/\/\S+\/pay\/PAY_/);
    expect(stdout).toMatch(/\(same delivery again\): HTTP 200 \(duplicate\)/);
    expect(stdout).toMatch(/✓ order ORDER\d+Q was fulfilled exactly once/);
    expect(stdout).toMatch(/payment ORDER\d+B is FAILED; the order stays unpaid/);
    expect(stdout).toMatch(/PAY_\w+ is EXPIRED/);
    expect(stdout).toContain('shop answered HTTP 401 (rejected: invalid_signature)');
    expect(stdout).toMatch(/payout PAYOUT\d+ is SUCCESS \(to PBBEMYKL account \*+6789\)/);
    expect(stdout).not.toContain('5140123456789');
    expect(stdout).toContain('withdrawals.create threw OutcomeUnknownError');
    expect(stdout).toContain('withdrawals.recover → { created: false }');
    expect(stdout).toMatch(/not two \(requests answered: connection dropped, 409\)/);
    expect(stdout).toContain('429 RATE_LIMITED, Retry-After: 1');
    expect(stdout).toMatch(/✓ the 429 was waited out/);
    expect(stdout).toMatch(/fulfilled \(RM 88\.00, found by the status query\)/);
    expect(stdout).toMatch(/Demo finished in \d+ ms/);
    expect(code).toBe(0);
  }, 90_000);
});

describe('npm run demo with MYR_GATEWAY_* set', () => {
  it('runs the same script over HTTP against that gateway and skips, with a note, what needs the mock', async () => {
    const mock = createMockGateway({ environment: 'test' });
    const server = await mock.serve();
    try {
      const { code, stdout } = await runExample('examples/demo.ts', [], {
        MYR_GATEWAY_BASE_URL: server.baseUrl,
        MYR_GATEWAY_MERCHANT_ID: mock.merchant.merchantId,
        MYR_GATEWAY_API_KEY: mock.merchant.apiKey,
      });
      expect(stdout).toContain(`gateway: the gateway at ${server.baseUrl}`);
      expect(stdout).toMatch(/– skipped: on this gateway the demo cannot act as the customer/);
      expect(stdout).toMatch(/– skipped: a withdrawal against this gateway may move real money/);
      expect(stdout).toContain('✓ the forged callback was refused with 401');
      expect(stdout).not.toContain('✗');
      expect(code).toBe(0);
      // It really went to that gateway, and sent it no withdrawal.
      expect(mock.payments.length).toBe(4);
      expect(mock.count('withdraw')).toBe(0);
    } finally {
      await server.close();
    }
  }, 90_000);
});

describe('npm run demo -- --sandbox', () => {
  it('starts the sandbox process, presses its buttons as the customer, receives its callbacks, and stops it', async () => {
    const { code, stdout } = await runExample('examples/demo.ts', ['--sandbox']);
    expect(stdout).toMatch(/gateway: the local sandbox process at http:\/\/127\.0\.0\.1:\d+\/api\/v1/);
    expect(stdout).toMatch(/customer → http:\/\/127\.0\.0\.1:\d+\/pay\/PAY_/);
    expect(stdout).toContain('the customer pressed "pay" on the sandbox\'s hosted page');
    expect(stdout).toMatch(/✓ order ORDER\d+Q was fulfilled exactly once/);
    expect(stdout).toContain('shop answered HTTP 200 (duplicate)');
    expect(stdout).toMatch(/payment ORDER\d+B is FAILED/);
    expect(stdout).toMatch(/PAY_\w+ is EXPIRED/);
    expect(stdout).toContain('✓ the forged callback was refused with 401');
    expect(stdout).toMatch(/payout PAYOUT\d+ is SUCCESS \(to PBBEMYKL account \*+6789\)/);
    expect(stdout).toContain('– skipped: needs the mock to drop the connection after processing');
    expect(stdout).not.toContain('✗');
    expect(code).toBe(0);
  }, 90_000);
});

describe('examples/withdrawal.ts', () => {
  it('recovers a lost withdrawal answer with withdrawals.recover, never paying out twice', async () => {
    const { code, stdout } = await runExample('examples/withdrawal.ts');
    expect(stdout).toMatch(/answer was lost, but the first request arrived \(PAYOUT\d+\); do not send again/);
    expect(stdout).toContain('withdraw requests the mock received: 2, refused as duplicates: 1');
    expect(code).toBe(0);
  }, 90_000);
});

describe('examples/reconcile.ts', () => {
  it('fulfils the payment whose callback was lost and leaves the one its callback handled', async () => {
    const { code, stdout } = await runExample('examples/reconcile.ts');
    expect(code).toBe(0);
    expect(stdout).toMatch(/fulfilled by the job: RECON\d+B\n/);
    expect(stdout).toMatch(/already handled by a callback: RECON\d+A\n/);
    expect(stdout).toContain('fulfilments: 2, distinct orders: 2');
  }, 90_000);
});
