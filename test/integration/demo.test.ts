// The README's main job must keep working: run the demo exactly as `npm run demo` does.
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';

/** Runs an example the way `npx tsx examples/…` does; rejects on a non-zero exit. */
async function runExample(file: string): Promise<string> {
  const { stdout } = await promisify(execFile)(process.execPath, ['--import', 'tsx', file], {
    cwd: new URL('../..', import.meta.url),
    timeout: 60_000,
  });
  return stdout;
}

describe('examples/demo.ts', () => {
  it('creates a payment, receives and verifies the callback, fulfils once, refuses a forgery', async () => {
    const stdout = await runExample('examples/demo.ts');
    expect(stdout).toContain('✓ the order was fulfilled exactly once');
    expect(stdout).toContain('✓ the forged callback was refused with 401');
    expect(stdout).not.toContain('✗');
    expect(stdout).toContain('Demo finished');
  }, 90_000);
});

describe('examples/withdrawal.ts', () => {
  it('recovers a lost withdrawal answer with withdrawals.recover, never paying out twice', async () => {
    const stdout = await runExample('examples/withdrawal.ts');
    expect(stdout).toMatch(/answer was lost, but the first request arrived \(PAYOUT\d+\); do not send again/);
    expect(stdout).toContain('withdraw requests the mock received: 2, refused as duplicates: 1');
  }, 90_000);
});

describe('examples/reconcile.ts', () => {
  it('fulfils the payment whose callback was lost and leaves the one its callback handled', async () => {
    const stdout = await runExample('examples/reconcile.ts');
    expect(stdout).toMatch(/fulfilled by the job: RECON\d+B\n/);
    expect(stdout).toMatch(/already handled by a callback: RECON\d+A\n/);
    expect(stdout).toContain('fulfilments: 2, distinct orders: 2');
  }, 90_000);
});
