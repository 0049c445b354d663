/**
 * Issue 15: a Next.js App Router app with module-scope `new MyrGateway()` clients (the docs'
 * checkout and webhook routes, examples/nextjs) builds with `next build` and no MYR_* variable
 * set, and at request time each route answers with the typed ConfigurationError instead.
 *
 * The app lives in a temp dir outside the repo: the package is built into its node_modules with
 * the project's tsup config, and next, react, react-dom and the package's dependencies are
 * symlinked from the repo's node_modules. The routes are the examples' TypeScript with the
 * types stripped (so the build needs no TypeScript setup of its own).
 */
import { type ChildProcess, spawn } from 'node:child_process';
import {
  mkdirSync,
  mkdtempSync,
  readFileSync,
  realpathSync,
  rmSync,
  symlinkSync,
  writeFileSync,
  copyFileSync,
} from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { createRequire } from 'node:module';
import { transformSync } from 'esbuild';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { run } from '../runtimes/harness.js';

const root = join(import.meta.dirname, '../..');
const LINKED = ['next', 'react', 'react-dom', 'ky', 'zod', 'qrcode'];
/** The environment of a machine where no MYR_* secret is set (the build stage of a deployment). */
const env = {
  ...Object.fromEntries(Object.entries(process.env).filter(([key]) => !key.startsWith('MYR_'))),
  NEXT_TELEMETRY_DISABLED: '1',
};
const nextBin = join(root, 'node_modules', 'next', 'dist', 'bin', 'next');

let work = '';
let app = '';
let server: ChildProcess | undefined;
let serverOutput = '';
let base = '';

function writeRoute(example: string, route: string): void {
  const source = readFileSync(join(root, 'examples', 'nextjs', example), 'utf8');
  const target = join(app, 'app', 'api', route, 'route.js');
  mkdirSync(dirname(target), { recursive: true });
  writeFileSync(target, transformSync(source, { loader: 'ts', format: 'esm' }).code);
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const address = probe.address();
      const port = typeof address === 'object' && address !== null ? address.port : 0;
      probe.close(() => resolve(port));
    });
  });
}

beforeAll(async () => {
  work = mkdtempSync(join(tmpdir(), 'myr-gateway-nextjs-'));
  app = join(work, 'app');
  const pkg = join(app, 'node_modules', 'myr-gateway');
  mkdirSync(pkg, { recursive: true });
  copyFileSync(join(root, 'package.json'), join(pkg, 'package.json'));
  const tsup = createRequire(import.meta.url).resolve('tsup/dist/cli-default.js');
  await run(process.execPath, [tsup, '--out-dir', join(pkg, 'dist'), '--no-dts', '--silent'], {
    cwd: root,
    timeoutMs: 120_000,
  });
  for (const name of LINKED)
    symlinkSync(realpathSync(join(root, 'node_modules', name)), join(app, 'node_modules', name), 'dir');
  writeFileSync(join(app, 'package.json'), JSON.stringify({ name: 'merchant-next-app', private: true }));
  // Turbopack compiles only files under its root; the linked packages live in the repo.
  writeFileSync(
    join(app, 'next.config.mjs'),
    "export default { turbopack: { root: '/' }, outputFileTracingRoot: '/' };\n",
  );
  writeRoute('route.ts', 'webhooks/myr');
  writeRoute('checkout/route.ts', 'checkout');
}, 150_000);

afterAll(async () => {
  if (server && server.exitCode === null) {
    const exited = new Promise((resolve) => server?.once('exit', resolve));
    server.kill('SIGTERM');
    await exited;
  }
  if (work) rmSync(work, { recursive: true, force: true });
});

describe('a Next.js App Router app with module-scope clients and no MYR_* set', () => {
  it('next build passes', async () => {
    const built = await run(process.execPath, [nextBin, 'build'], { cwd: app, env, timeoutMs: 300_000 });
    expect(built.stdout).toContain('/api/checkout');
    expect(built.stdout).toContain('/api/webhooks/myr');
  }, 320_000);

  it('at request time, the routes answer with the typed ConfigurationError', async () => {
    const port = await freePort();
    server = spawn(process.execPath, [nextBin, 'start', '-p', String(port), '-H', '127.0.0.1'], {
      cwd: app,
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const ready = new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`next start not ready in 60 s:\n${serverOutput}`)), 60_000);
      const read = (chunk: Buffer) => {
        serverOutput += chunk.toString();
        if (serverOutput.includes('Ready')) {
          clearTimeout(timer);
          resolve();
        }
      };
      server?.stdout?.on('data', read);
      server?.stderr?.on('data', read);
      server?.once('exit', (code) => reject(new Error(`next start exited with ${code}:\n${serverOutput}`)));
    });
    await ready;
    base = `http://127.0.0.1:${port}`;

    const order = { id: 'ORDER1001', total: '149.90', name: 'Aisyah Rahman', phone: '60123456789' };
    const checkout = await fetch(`${base}/api/checkout`, { method: 'POST', body: JSON.stringify(order) });
    expect(checkout.status).toBe(500);
    expect(await checkout.json()).toEqual({ error: 'INVALID_CONFIGURATION', field: 'baseUrl' });

    const webhook = await fetch(`${base}/api/webhooks/myr`, {
      method: 'POST',
      body: '{}',
      headers: { 'content-type': 'application/json' },
    });
    expect(webhook.status).toBe(500);

    // What the server logged: the typed errors, naming the variables to set, and no stack of a crash at import.
    await expect.poll(() => serverOutput, { timeout: 5_000 }).toContain('MYR_GATEWAY_API_KEY');
    expect(serverOutput).toContain('ConfigurationError');
    expect(serverOutput).toContain('INVALID_CONFIGURATION');
  }, 90_000);
});
