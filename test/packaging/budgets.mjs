// Bundle-size budgets, measured the way a merchant's bundler meets the package: each entry's
// named imports bundled with their dependencies by esbuild, minified, then gzipped.
// Used by check-package.mjs (CI fails over budget) and by `npm run bench` (prints the figures).
import { builtinModules } from 'node:module';
import { resolve } from 'node:path';
import { TextDecoder } from 'node:util';
import { gzipSync } from 'node:zlib';
import { build } from 'esbuild';

/** What a merchant imports, and the most it may cost, min+gzip, in bytes. */
export const BUDGETS = [
  {
    name: 'myr-gateway (MyrGateway)',
    source: "import { MyrGateway } from 'myr-gateway'; globalThis.keep = MyrGateway;",
    // ky (8.9 kB) is the client's engine again (issue 21): the ceiling makes room for it, and the
    // code it replaced went, so the goal is under 33 kB. The zod/mini core is 5.6 kB with the
    // schema kinds the client uses. CI holds the line at the ceiling and prints the distance to
    // the goal; see docs/benchmarks.md.
    maxGzipBytes: 33 * 1024,
    ceilingGzipBytes: 35 * 1024,
    forbidden: [],
  },
  {
    name: 'myr-gateway/webhooks (WebhookVerifier, createWebhookHandler)',
    source:
      "import { WebhookVerifier, createWebhookHandler } from 'myr-gateway/webhooks'; globalThis.keep = [WebhookVerifier, createWebhookHandler];",
    maxGzipBytes: 8 * 1024,
    // The verifier must not drag in the client: no schema library, no HTTP client, no endpoints.
    forbidden: ['node_modules/zod/', 'node_modules/ky/', 'auth/token', 'payment/request'],
  },
  {
    name: 'myr-gateway/redis (RedisTokenStore, RedisRateLimiter, RedisWebhookStore)',
    source:
      "import { RedisTokenStore, RedisRateLimiter, RedisWebhookStore } from 'myr-gateway/redis'; globalThis.keep = [RedisTokenStore, RedisRateLimiter, RedisWebhookStore];",
    // The stores drive the merchant's Redis client: no HTTP client, no schema library. 10.0 kB
    // when ky came back; 11.7 kB once every key the stores read is treated as input (a poisoned
    // rate-cfg, foreign slots, locks without TTL, keys of another type: docs/fleet.md's table) and
    // the webhook claims carry their TTL; 13.6 kB with the edge probe's Lua (rate-edge-probe.ts,
    // issue 22: Lua text does not minify); 14.1 kB once pacing reads the service's clock from the
    // answers' Date headers (issue 33: the fallback in-process limiter and the bucket model carry
    // it); 14.6 kB once a process new to the limits waits on the fleet's requests in flight (a
    // slot scored ahead counts as answered for 10 s of the bucket's waiting, which the process
    // adds up). A bound against growth, not a product budget: what this entry must never carry
    // is in `forbidden`.
    maxGzipBytes: 14.7 * 1024,
    forbidden: ['node_modules/zod/', 'node_modules/ky/'],
  },
];

/** The floor the root budget is judged against: ky and zod/mini alone, the runtime dependencies. */
export const BASELINE = {
  name: 'ky + zod/mini (baseline)',
  source: "import ky from 'ky'; import * as z from 'zod/mini'; globalThis.keep = [ky, z.object({ a: z.string() })];",
};

/** The options of every bundle here: what a merchant's esbuild does with the import. */
function bundleOptions(source, resolveDir) {
  return {
    stdin: { contents: source, resolveDir, loader: 'js' },
    bundle: true,
    write: false,
    format: 'esm',
    platform: 'neutral',
    mainFields: ['module', 'main'],
    conditions: ['import'],
    // Node's builtins stay imports, under either spelling (the Redis entry imports 'crypto').
    external: ['node:*', ...builtinModules],
    // Resolve the installed package, never the repo's tsconfig paths to src/.
    tsconfigRaw: {},
    logLevel: 'error',
  };
}

/**
 * Bundles `source` as if it were a file in `resolveDir` (a project with myr-gateway installed)
 * and returns its minified and gzipped sizes and the modules it pulled in.
 */
export async function measure(source, resolveDir) {
  const result = await build({ ...bundleOptions(source, resolveDir), minify: true, metafile: true });
  const code = result.outputFiles[0].contents;
  return {
    minBytes: code.length,
    gzipBytes: gzipSync(code).length,
    inputs: Object.keys(result.metafile.inputs),
    text: new TextDecoder().decode(code),
  };
}

const SRC = resolve(import.meta.dirname, '../../src');

/**
 * The SDK's top-level declarations in the bundle of `source`, name -> how many (esbuild tells
 * a clash apart with a numeric suffix, dropped here): from the package installed in
 * `resolveDir`, or with `fromSource` from the repository's src/ (`myr-gateway` read as src/).
 * Unminified, so each module's code follows a comment naming its file.
 */
async function declarations(source, resolveDir, fromSource) {
  const result = await build({ ...bundleOptions(source, resolveDir), alias: fromSource ? { 'myr-gateway': SRC } : {} });
  const counts = new Map();
  let ours = false;
  for (const line of new TextDecoder().decode(result.outputFiles[0].contents).split('\n')) {
    const file = /^\/\/ (\S*[/.]\S*)$/.exec(line)?.[1];
    if (file !== undefined) ours = !file.includes('node_modules/') || file.includes('node_modules/myr-gateway/');
    const name = ours ? /^(?:var|let|const|(?:async )?function\*?|class) ([\w$]+?)\d*\b/.exec(line)?.[1] : undefined;
    if (name !== undefined) counts.set(name, (counts.get(name) ?? 0) + 1);
  }
  return counts;
}

/**
 * What the installed package's bundle of `source` declares beyond the same import bundled from
 * src/. From src/, a module the import never uses is dropped whole (`sideEffects: false`); in the
 * package it shares a chunk with the modules the import uses (tsup.config.ts groups the chunks),
 * and esbuild keeps each top-level statement of it that it cannot prove pure (a constructor
 * call, a property read, a `\p{…}` regex), and what that statement reaches.
 */
export async function carriedBeyondSource(source, resolveDir) {
  const [installed, fromSource] = await Promise.all([
    declarations(source, resolveDir, false),
    declarations(source, resolveDir, true),
  ]);
  return [...installed].filter(([name, count]) => count > (fromSource.get(name) ?? 0)).map(([name]) => name);
}

const kB = (bytes) => `${(bytes / 1024).toFixed(1)} kB`;

/** Measures every budget; returns printable rows and the list of violations. */
export async function checkBudgets(resolveDir) {
  const rows = [];
  const violations = [];
  for (const budget of BUDGETS) {
    const size = await measure(budget.source, resolveDir);
    const ceiling = budget.ceilingGzipBytes ?? budget.maxGzipBytes;
    const target =
      ceiling === budget.maxGzipBytes
        ? ''
        : ` (target ${kB(budget.maxGzipBytes)}: ${kB(size.gzipBytes - budget.maxGzipBytes)} to cut)`;
    rows.push(
      `${budget.name}: ${kB(size.gzipBytes)} min+gzip (${kB(size.minBytes)} min), budget ${kB(ceiling)}${target}`,
    );
    if (size.gzipBytes > ceiling)
      violations.push(`${budget.name} is ${kB(size.gzipBytes)}, over its ${kB(ceiling)} budget`);
    const carried = await carriedBeyondSource(budget.source, resolveDir);
    if (carried.length > 0) {
      violations.push(
        `${budget.name} carries ${carried.join(', ')}, which the same import from src/ does not: make that top-level code pure (see carriedBeyondSource)`,
      );
    }
    for (const marker of budget.forbidden) {
      if (size.inputs.some((input) => input.includes(marker)) || size.text.includes(marker)) {
        violations.push(`${budget.name} contains ${marker}`);
      }
    }
  }
  const baseline = await measure(BASELINE.source, resolveDir);
  rows.push(`${BASELINE.name}: ${kB(baseline.gzipBytes)} min+gzip (${kB(baseline.minBytes)} min)`);
  return { rows, violations };
}
