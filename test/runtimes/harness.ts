// The Node side of the runtime conformance runs: builds and packs the package, installs
// the tarball into an empty project, signs the callbacks, and runs the checks on Bun,
// Deno and workerd. conformance.test.ts holds the expectations.
import { spawn } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { build } from 'esbuild';
import { signCallback, type SignedCallback } from '../../src/webhooks/sign.js';

export const root = resolve(import.meta.dirname, '../..');
const here = import.meta.dirname;

/** The runtime binaries the npm devDependencies put in node_modules/.bin. */
export const binaries = {
  bun: join(root, 'node_modules', '.bin', 'bun'),
  deno: join(root, 'node_modules', '.bin', 'deno'),
  workerd: join(root, 'node_modules', '.bin', 'workerd'),
} as const;
export type RuntimeName = keyof typeof binaries;

export function hasBinary(name: RuntimeName): boolean {
  return existsSync(binaries[name]);
}

interface Exit {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

/** Runs a command to its end; rejects with its output when it fails or outlives `timeoutMs`. */
export function run(
  cmd: string,
  args: string[],
  opts: { cwd: string; env?: NodeJS.ProcessEnv; timeoutMs: number },
): Promise<Exit> {
  return new Promise((resolvePromise, reject) => {
    const child = spawn(cmd, args, { cwd: opts.cwd, env: opts.env ?? process.env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(
        new Error(
          `${cmd} ${args.join(' ')} did not exit within ${opts.timeoutMs} ms\nstdout:\n${stdout}\nstderr:\n${stderr}`,
        ),
      );
    }, opts.timeoutMs);
    child.on('error', (error) => {
      clearTimeout(timer);
      reject(error);
    });
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      if (code === 0) resolvePromise({ code, signal, stdout, stderr });
      else
        reject(
          new Error(`${cmd} ${args.join(' ')} exited with ${code ?? signal}\nstdout:\n${stdout}\nstderr:\n${stderr}`),
        );
    });
  });
}

/** The last line of a runtime's output, which is its JSON report. */
function lastJsonLine(stdout: string): ConformanceReport {
  const line = stdout.trim().split('\n').at(-1) ?? '';
  return JSON.parse(line) as ConformanceReport;
}

/**
 * Builds the package with the project's tsup config (no .d.ts: the runtimes do not read
 * them), packs it with `npm pack`, and installs the tarball into an empty project in a
 * temp dir, next to the conformance scripts. Returns that project's directory.
 */
export async function installPackedPackage(work: string): Promise<string> {
  const stage = join(work, 'pkg');
  mkdirSync(stage, { recursive: true });
  for (const file of ['package.json', 'README.md', 'CHANGELOG.md']) copyFileSync(join(root, file), join(stage, file));
  const tsupBin = createRequire(import.meta.url).resolve('tsup/dist/cli-default.js');
  await run(process.execPath, [tsupBin, '--out-dir', join(stage, 'dist'), '--no-dts', '--silent'], {
    cwd: root,
    timeoutMs: 120_000,
  });
  const packed = await run('npm', ['pack', '--json', '--ignore-scripts', '--pack-destination', work], {
    cwd: stage,
    timeoutMs: 60_000,
  });
  const tarball = join(work, (JSON.parse(packed.stdout) as { filename: string }[])[0]!.filename);

  const app = join(work, 'app');
  mkdirSync(app);
  writeFileSync(
    join(app, 'package.json'),
    JSON.stringify({ name: 'merchant-app', private: true, version: '1.0.0', type: 'module' }),
  );
  await run('npm', ['install', '--no-audit', '--no-fund', '--ignore-scripts', '--prefer-offline', tarball], {
    cwd: app,
    timeoutMs: 120_000,
  });
  for (const file of ['conformance.mjs', 'entry-cli.mjs', 'entry-worker.mjs'])
    copyFileSync(join(here, file), join(app, file));
  return app;
}

export function makeWorkDir(): { work: string; cleanup: () => void } {
  const work = mkdtempSync(join(tmpdir(), 'myr-gateway-runtimes-'));
  return { work, cleanup: () => rmSync(work, { recursive: true, force: true }) };
}

/** The callbacks each runtime receives, signed here in Node by the SDK's own signer. */
export interface ConformanceCallbacks {
  genuine: SignedCallback;
  /** The genuine body with its amount raised, signature unchanged. */
  tampered: SignedCallback;
  /** Correctly signed, timestamped 10 minutes ago (tolerance is 5). */
  stale: SignedCallback;
  /** The same payment and status under a new webhook_id: the spec's second delivery. */
  redelivery: SignedCallback;
  /** The genuine body without `signature` and without `X-Webhook-Signature`. */
  missingSignature: SignedCallback;
}

export async function signConformanceCallbacks(
  apiKey: string,
  paymentId: string,
  referenceId: string,
): Promise<ConformanceCallbacks> {
  const fields = { payment_id: paymentId, reference_id: referenceId, amount: 120.5, status: 'SUCCESS' };
  const genuine = await signCallback(apiKey, fields);
  const tamperedBody = { ...genuine.body, amount: 1205 };
  const stale = await signCallback(apiKey, { ...fields, timestamp: new Date(Date.now() - 10 * 60_000).toISOString() });
  const redelivery = await signCallback(apiKey, fields);
  const { signature: _signature, ...unsigned } = genuine.body;
  const { 'X-Webhook-Signature': _header, ...unsignedHeaders } = genuine.headers;
  return {
    genuine,
    tampered: { body: tamperedBody, headers: genuine.headers, rawBody: JSON.stringify(tamperedBody) },
    stale,
    redelivery,
    missingSignature: { body: unsigned as never, headers: unsignedHeaders, rawBody: JSON.stringify(unsigned) },
  };
}

/** What the Node side hands each runtime. */
export interface ConformanceInput {
  apiKey: string;
  merchantId: string;
  mockBaseUrl: string;
  referenceId: string;
  callbacks: ConformanceCallbacks;
}

/** What the runtime scripts print (built in conformance.mjs): observations, not verdicts. */
export interface ConformanceReport {
  runtime: { name: string; version: string | null };
  version: string;
  errorTreeShared: boolean;
  verifier: Record<
    'auto' | 'web',
    {
      cryptoPath: string;
      genuine: unknown;
      tampered: unknown;
      stale: unknown;
      handlerFirst: unknown;
      handlerReplay: unknown;
      handlerRedelivery: unknown;
      handlerRuns: string[];
    }
  >;
  webHandler: Record<
    'genuine' | 'replay' | 'redelivery' | 'tampered' | 'stale' | 'missingSignature' | 'malformed' | 'get',
    unknown
  > & {
    runs: string[];
  };
  client: { created: unknown; retrieved: unknown; invalidAmount: unknown; duplicateReference: { error?: unknown } };
}

/** Runs entry-cli.mjs under Bun or Deno and returns its report. */
export async function runCli(name: 'bun' | 'deno', app: string, input: ConformanceInput): Promise<ConformanceReport> {
  const inputFile = join(app, `input-${name}.json`);
  writeFileSync(inputFile, JSON.stringify(input));
  const args =
    name === 'bun'
      ? ['--no-install', 'entry-cli.mjs', inputFile]
      : [
          'run',
          '--no-prompt',
          '--node-modules-dir=manual',
          '--no-config',
          // The least a merchant's service needs: loopback network, and reading its own files.
          '--allow-net=127.0.0.1',
          `--allow-read=${app}`,
          'entry-cli.mjs',
          inputFile,
        ];
  const env = { ...process.env, DENO_DIR: join(app, '.deno'), DENO_NO_UPDATE_CHECK: '1', NO_COLOR: '1' };
  const exit = await run(binaries[name], args, { cwd: app, env, timeoutMs: 60_000 });
  return lastJsonLine(exit.stdout);
}

const WORKERD_CONFIG = `using Workerd = import "/workerd/workerd.capnp";

const config :Workerd.Config = (
  services = [
    (name = "main", worker = .worker),
    # Outbound fetch may reach loopback only: the mock gateway on 127.0.0.1.
    (name = "loopback", network = (allow = ["local"])),
  ],
  sockets = [(name = "http", address = "127.0.0.1:0", http = (), service = "main")],
);

const worker :Workerd.Worker = (
  modules = [(name = "worker.js", esModule = embed "worker.js")],
  compatibilityDate = "$DATE",
  bindings = [(name = "SELF", service = "main")],
  globalOutbound = "loopback",
);
`;

/**
 * Bundles entry-worker.mjs with esbuild the way Wrangler does (workerd has no
 * node_modules resolution), serves it with `workerd serve`, and asks it to run the checks.
 */
export async function runWorkerd(
  app: string,
  input: ConformanceInput,
  compatibilityDate: string,
): Promise<ConformanceReport> {
  await build({
    entryPoints: [join(app, 'entry-worker.mjs')],
    outfile: join(app, 'worker.js'),
    bundle: true,
    format: 'esm',
    platform: 'neutral',
    conditions: ['workerd', 'worker', 'browser'],
    mainFields: ['module', 'main'],
    target: 'es2024',
    logLevel: 'silent',
  });
  writeFileSync(join(app, 'config.capnp'), WORKERD_CONFIG.replace('$DATE', compatibilityDate));

  // workerd reports the port it bound on the control fd (3), as a JSON line.
  const child = spawn(binaries.workerd, ['serve', 'config.capnp', '--control-fd=3'], {
    cwd: app,
    stdio: ['ignore', 'pipe', 'pipe', 'pipe'],
  });
  let stderr = '';
  child.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
  child.stdout!.on('data', (d: Buffer) => (stderr += d.toString()));
  const exited = new Promise<never>((_, reject) =>
    child.on('exit', (code, signal) => reject(new Error(`workerd exited with ${code ?? signal}\n${stderr}`))),
  );
  exited.catch(() => {});
  try {
    const port = await Promise.race([
      workerdPort(child.stdio[3] as NodeJS.ReadableStream),
      exited,
      timeout(30_000, 'workerd did not listen', () => stderr),
    ]);
    const response = await Promise.race([
      fetch(`http://127.0.0.1:${port}/run`, { method: 'POST', body: JSON.stringify(input) }),
      exited,
      timeout(60_000, 'the Worker did not answer /run', () => stderr),
    ]);
    const text = await response.text();
    if (response.status !== 200) throw new Error(`the Worker answered ${response.status}: ${text}\n${stderr}`);
    return JSON.parse(text) as ConformanceReport;
  } finally {
    child.kill('SIGTERM');
  }
}

function workerdPort(control: NodeJS.ReadableStream): Promise<number> {
  return new Promise((resolvePort) => {
    let buffered = '';
    control.on('data', (d: Buffer) => {
      buffered += d.toString();
      for (const line of buffered.split('\n')) {
        try {
          const message = JSON.parse(line) as { event?: string; socket?: string; port?: number };
          if (message.event === 'listen' && message.socket === 'http' && message.port) resolvePort(message.port);
        } catch {
          // a partial line; wait for the rest
        }
      }
    });
  });
}

function timeout(ms: number, what: string, detail: () => string): Promise<never> {
  return new Promise((_, reject) => {
    const timer = setTimeout(() => reject(new Error(`${what} within ${ms} ms\n${detail()}`)), ms);
    timer.unref();
  });
}

export function readVersion(): string {
  return (JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { version: string }).version;
}
