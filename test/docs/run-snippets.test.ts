// Every ```ts block of README.md and docs/*.md runs as a merchant would paste it, unless its
// fence says why not (```ts run=false <reason>, or ```ts nocheck <reason>). Each block becomes
// a module under .tmp/docs-run (so 'myr-gateway' and its subpaths are src), its `declare`d
// names are given values (test/docs/inputs.ts), and it runs against the msw mock of the service
// with MYR_GATEWAY_* set to that mock. A block must complete; every webhook receiver it builds
// must answer 200 to a signed callback; test/docs/promises.ts checks what its comments state.
import { mkdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { format } from 'node:util';
import type * as PinoModule from 'pino';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { RedisServer } from '../helpers/redis.js';
import { deliver, receiverKind } from './deliver.js';
import { inputFor } from './inputs.js';
import { pinoLines } from './pino-capture.js';
import { PROMISES, type DocPromise, type Run } from './promises.js';
import { Scene, SHOP } from './scene.js';
import { shapeOf, writeSnippetModule } from './snippet-module.js';
import { allSnippets, extractSnippets, type Snippet } from './snippets.js';
import { resetCollectedSuite, runCollectedSuite } from './vitest-shim.js';

// The real pino, writing where the runner can read it instead of to stdout.
vi.mock('pino', async (importOriginal) => {
  const real = await importOriginal<typeof PinoModule>();
  const { pinoDestination } = await import('./pino-capture.js');
  const pino = (options: Parameters<typeof real.default>[0] = {}) => real.default(options, pinoDestination);
  return { ...real, default: Object.assign(pino, real.default) };
});

const root = fileURLToPath(new URL('../..', import.meta.url));
const dir = join(root, '.tmp', 'docs-run');
const shim = fileURLToPath(new URL('./vitest-shim.ts', import.meta.url));
/** Blocks that may stay unrun (each with its reason on the fence): few, so "not run" stays the exception. */
const MAX_NOT_RUN = 4;

const where = (snippet: Snippet): string => `${snippet.doc}:${snippet.line}`;
const promiseFor = (snippet: Snippet): DocPromise | undefined =>
  PROMISES.find((promise) => promise.doc === snippet.doc && snippet.code.includes(promise.match));
const needsRedis = (snippet: Snippet): boolean => snippet.code.includes('process.env.REDIS_URL');

let redis: RedisServer | undefined;

/** Closes what a snippet left open that only the runner can reach: Redis clients, Fastify apps. */
async function closeLeftovers(exports: Record<string, unknown>): Promise<void> {
  for (const value of Object.values(exports)) {
    if (typeof value !== 'object' || value === null) continue;
    if ('quit' in value && typeof value.quit === 'function') await value.quit();
    if (receiverKind(value) === 'fastify' && 'close' in value && typeof value.close === 'function') await value.close();
  }
}

/**
 * fetch for the run of a block: loopback passes, and so do the reserved `.example` / `.test`
 * names the mocks answer for (msw intercepts below fetch; if it did not, such names resolve
 * nowhere). Anything else is refused and recorded: a block must not reach the network.
 */
function offlineFetch(refused: string[]): typeof fetch {
  const realFetch = globalThis.fetch;
  return (input, init) => {
    const url = new URL(input instanceof Request ? input.url : String(input));
    const local = ['127.0.0.1', 'localhost', '[::1]'].includes(url.hostname) || /\.(example|test)$/.test(url.hostname);
    if (local) return realFetch(input, init);
    refused.push(url.origin);
    return Promise.reject(new TypeError(`fetch failed: doc snippets reach no network beyond loopback (${url.origin})`));
  };
}

/** Runs one block in its scene and checks what it promises; errors name the block's file and line. */
async function runSnippet(snippet: Snippet): Promise<void> {
  const promise = promiseFor(snippet);
  const shape = shapeOf(snippet.code);
  const offLoopback: string[] = [];
  vi.stubGlobal('fetch', offlineFetch(offLoopback));
  // A test-file block starts its own msw server; two at once would fight over fetch.
  const ownsMsw = /\bcreateMockGateway\(/.test(snippet.code) && /\.listen\(/.test(snippet.code);
  const scene = await Scene.open({ msw: !ownsMsw });
  const captured: Run['console'] = { log: [], info: [], warn: [], error: [] };
  for (const method of ['log', 'info', 'warn', 'error'] as const) {
    vi.spyOn(console, method).mockImplementation((...args: unknown[]) => void captured[method].push(format(...args)));
  }
  pinoLines.length = 0;
  vi.stubEnv('MYR_GATEWAY_BASE_URL', scene.mock.baseUrl);
  vi.stubEnv('MYR_GATEWAY_MERCHANT_ID', scene.merchantId);
  vi.stubEnv('MYR_GATEWAY_API_KEY', SHOP.apiKey);
  vi.stubEnv('MYR_GATEWAY_API_KEY_NEW', SHOP.apiKey);
  vi.stubEnv('MYR_GATEWAY_API_KEY_OLD', `${SHOP.apiKey}_old`);
  if (redis) vi.stubEnv('REDIS_URL', redis.url);
  const inputs: Record<string, unknown> = {};
  let exports: Record<string, unknown> = {};
  try {
    Object.assign(inputs, await promise?.setup?.(scene));
    for (const input of shape.declared) inputs[input.name] ??= await inputFor(input, scene);
    Object.assign(globalThis, inputs); // `declare const gateway` compiles to nothing: the global answers
    resetCollectedSuite();
    exports = { ...((await import(pathToFileURL(writeSnippetModule(snippet, dir, shim)).href)) as Record<string, unknown>) };
    if (shape.isTestFile) {
      const { registered, passed } = await runCollectedSuite();
      expect(passed, 'every test of the sample passes').toEqual(registered);
    }
    const deliveries: Run['deliveries'] = [];
    for (const [name, receiver] of Object.entries(exports)) {
      if (receiverKind(receiver) === undefined) continue;
      const callback = await (promise?.callback ?? ((s: Scene) => s.paidDeposit()))(scene);
      const answer = await deliver(receiver, callback);
      expect(answer, `${name} answers a signed callback with 200`).toMatchObject({ status: 200 });
      deliveries.push({ name, callback, answer });
    }
    await promise?.check?.({ scene, exports, inputs, console: captured, logs: pinoLines, deliveries });
    if (!promise?.warns) expect({ warn: captured.warn, error: captured.error }).toEqual({ warn: [], error: [] });
    expect(offLoopback, 'requests that would have left the machine').toEqual([]);
  } catch (error) {
    if (!(error instanceof Error)) throw new Error(`${where(snippet)}: ${String(error)}`, { cause: error });
    error.message = `${where(snippet)}: ${error.message}`; // kept: the assertion's diff and stack stay
    throw error;
  } finally {
    await closeLeftovers(exports);
    for (const name of Object.keys(inputs)) Reflect.deleteProperty(globalThis, name);
    vi.restoreAllMocks();
    vi.unstubAllEnvs();
    await scene.close();
    vi.unstubAllGlobals();
  }
}

describe('doc snippets run', () => {
  const snippets = allSnippets(root);
  const runnable = snippets.filter((snippet) => snippet.notRun === undefined);

  // The blocks keep their files in tmpdir() (a SQLite shop, its ledger): a directory of this run
  // only, so that no block meets a file an earlier run (or an earlier build) left in the system's.
  const systemTmp = process.env.TMPDIR;
  beforeAll(async () => {
    rmSync(dir, { recursive: true, force: true });
    mkdirSync(join(dir, 'tmp'), { recursive: true });
    process.env.TMPDIR = join(dir, 'tmp');
    if (runnable.some(needsRedis)) redis = await RedisServer.start();
  });
  afterAll(async () => {
    if (systemTmp === undefined) delete process.env.TMPDIR;
    else process.env.TMPDIR = systemTmp;
    await redis?.stop();
  });

  it('a block is run unless its fence says why not, and few are not', () => {
    const notRun = snippets.filter((snippet) => snippet.notRun !== undefined);
    expect(notRun.filter((snippet) => (snippet.notRun ?? '').length < 10).map(where), 'not run, without a reason').toEqual([]);
    expect(notRun.map(where).length, `not run: ${notRun.map(where).join(', ')}`).toBeLessThanOrEqual(MAX_NOT_RUN);
    expect(runnable.length).toBeGreaterThan(40);
  });

  it('reads why a block is not run from its fence, or from a `// nocheck:` first line', () => {
    const blocks = extractSnippets('docs/x.md', [
      '```ts run=false', 'a();', '```',
      '```ts run=false: takes port 3000', 'a();', '```',
      '```ts nocheck', '// nocheck: Bun and Deno globals', 'a();', '```',
      '```ts', 'a();', '```',
    ].join('\n'));
    expect(blocks.map((block) => block.notRun)).toEqual(['', 'takes port 3000', 'Bun and Deno globals', undefined]);
  });

  it('each promise names exactly one block that runs', () => {
    for (const promise of PROMISES) {
      const blocks = snippets.filter((snippet) => snippet.doc === promise.doc && snippet.code.includes(promise.match));
      expect(blocks.map((snippet) => ({ where: where(snippet), runs: snippet.notRun === undefined })), `${promise.doc}: ${promise.match}`)
        .toEqual([{ where: expect.any(String), runs: true }]);
    }
  });

  for (const snippet of runnable) it(where(snippet), () => runSnippet(snippet));

  it('fails a block that throws, naming its file and line', async () => {
    const [broken] = extractSnippets('docs/broken.md', '# x\n\n```ts\nthrow new TypeError("no such order");\n```\n');
    await expect(runSnippet(broken as Snippet)).rejects.toThrow(/^docs\/broken\.md:4: no such order/);
  });

  it('fails a block that reaches beyond loopback', async () => {
    const [online] = extractSnippets('docs/broken.md', "```ts\nawait fetch('https://example.com/');\n```\n");
    await expect(runSnippet(online as Snippet)).rejects.toThrow(/doc snippets reach no network beyond loopback \(https:\/\/example\.com\)/);
  });

  it('fails a block whose declared input no fixture gives', async () => {
    const [unknown] = extractSnippets('docs/broken.md', '```ts\ndeclare const warehouse: { ship(): void };\nwarehouse.ship();\n```\n');
    await expect(runSnippet(unknown as Snippet)).rejects.toThrow(/no fixture gives `warehouse/);
  });
});
