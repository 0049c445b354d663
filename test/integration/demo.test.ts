// The README's main job must keep working: run the demo exactly as `npm run demo` does.
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';

describe('examples/demo.ts', () => {
  it('creates a payment, receives and verifies the callback, fulfils once, refuses a forgery', async () => {
    const { stdout } = await promisify(execFile)(process.execPath, ['--import', 'tsx', 'examples/demo.ts'], {
      cwd: new URL('../..', import.meta.url),
      timeout: 60_000,
    });
    expect(stdout).toContain('✓ the order was fulfilled exactly once');
    expect(stdout).toContain('✓ the forged callback was refused with 401');
    expect(stdout).not.toContain('✗');
    expect(stdout).toContain('Demo finished');
  }, 90_000);
});
