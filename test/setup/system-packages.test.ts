/**
 * The README's `npm test` sets up what the suite needs (test/setup/system-packages.mjs): the
 * Debian packages it starts real servers and tools from are installed when missing, and CI
 * runs that same command. Run here with `--dry-run` only: it never installs anything.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';

const root = fileURLToPath(new URL('../..', import.meta.url));
const script = join(root, 'test/setup/system-packages.mjs');
const empty = mkdtempSync(join(tmpdir(), 'myr-no-tools-'));
afterAll(() => rmSync(empty, { recursive: true, force: true }));

describe('npm test on a fresh machine', () => {
  it('installs the packages that are missing: apt-get update first, then one install of exactly those', () => {
    // A PATH with nothing on it: every tool looked up on PATH is missing (Chromium and PostgreSQL
    // are found at their Debian paths, so they stay as this machine has them).
    const run = spawnSync(process.execPath, [script, '--dry-run'], { env: { PATH: empty }, encoding: 'utf8' });
    expect(run.status).toBe(0);
    expect(run.stdout).toContain('missing: openssl, redis-server, mariadb-server');
    expect(run.stdout.split('\n').filter((line) => line.startsWith('would run:'))).toEqual([
      'would run: apt-get update -qq',
      'would run: apt-get install -y -qq openssl redis-server mariadb-server',
    ]);
  });

  it('on the machine the suite runs on, nothing is missing and nothing is run', () => {
    expect(execFileSync(process.execPath, [script, '--dry-run'], { encoding: 'utf8' })).toBe('');
  });

  it("is what the README's `npm test` runs first, and what .ci/run runs", () => {
    const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { scripts: Record<string, string> };
    expect(pkg.scripts.test).toBe('node test/setup/system-packages.mjs && vitest run');
    const ci = readFileSync(join(root, '.ci/run'), 'utf8');
    expect(ci).toMatch(/^npm test$/m);
    expect(ci).not.toContain('apt-get install'); // one list of packages: the script's
  });
});
