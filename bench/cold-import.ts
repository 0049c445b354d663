/**
 * Cold-import bench: what a serverless or edge cold start pays to load each entry, as wall-time
 * ratios against baselines measured in the same run, in interleaved rounds:
 * - `myr-gateway/webhooks` against a bare `node -e ""` start (budget 1.3x);
 * - `myr-gateway` against importing ky and zod/mini alone (budget 1.2x).
 * Also prints the bundle sizes of test/packaging/budgets.mjs. Uses dist/ (built first when missing or older than src/).
 *
 * @module
 */
import { spawnSync } from 'node:child_process';
import { performance } from 'node:perf_hooks';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { builtFile } from './built-package.js';
import { median } from './harness.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const ROUNDS = Number(process.env.BENCH_IMPORT_ROUNDS ?? 21);

const dist = (file: string) => pathToFileURL(`${ROOT}dist/${file}`).href;
const CASES = {
  bare: '',
  'node:crypto': "import 'node:crypto';",
  webhooks: `import '${dist('webhooks/index.js')}';`,
  'ky + zod/mini': "import 'ky'; import 'zod/mini';",
  root: `import '${dist('index.js')}';`,
} as const;
type CaseName = keyof typeof CASES;

function timeOnce(source: string): number {
  const start = performance.now();
  const child = spawnSync(process.execPath, ['--input-type=module', '-e', source], { cwd: ROOT, stdio: 'ignore' });
  const elapsed = performance.now() - start;
  if (child.status !== 0) throw new Error(`cold import failed: ${source}`);
  return elapsed;
}

/** Median wall ms per case over interleaved rounds, plus the median of per-round ratios. */
export function runColdImportBench(): void {
  builtFile('index.js');
  const names = Object.keys(CASES) as CaseName[];
  const samples = Object.fromEntries(names.map((name) => [name, [] as number[]])) as Record<CaseName, number[]>;
  for (const name of names) timeOnce(CASES[name]); // warm the file system cache
  for (let round = 0; round < ROUNDS; round++) {
    for (const name of names) samples[name].push(timeOnce(CASES[name]));
  }
  const ratio = (a: CaseName, b: CaseName) => median(samples[a].map((value, i) => value / (samples[b][i] as number)));
  console.log(`cold import, ${ROUNDS} interleaved rounds, median wall ms:`);
  for (const name of names) console.log(`  ${name.padEnd(14)} ${median(samples[name]).toFixed(1)} ms`);
  console.log(`  node:crypto / bare   ${ratio('node:crypto', 'bare').toFixed(2)}x`);
  console.log(`  webhooks / bare      ${ratio('webhooks', 'bare').toFixed(2)}x  (budget 1.30x)`);
  console.log(`  root / ky + zod/mini ${ratio('root', 'ky + zod/mini').toFixed(2)}x  (budget 1.20x)`);
}

/** Bundle sizes of each entry against its budget (esbuild, minify, gzip). */
export async function runSizeReport(): Promise<void> {
  const { checkBudgets } = (await import(pathToFileURL(`${ROOT}test/packaging/budgets.mjs`).href)) as {
    checkBudgets: (dir: string) => Promise<{ rows: string[]; violations: string[] }>;
  };
  // Resolved through the repo's own package name (self-reference via package.json exports).
  const { rows, violations } = await checkBudgets(ROOT);
  console.log('bundle sizes (esbuild, minify, gzip; each entry with its dependencies):');
  for (const row of rows) console.log(`  ${row}`);
  for (const violation of violations) console.log(`  OVER BUDGET: ${violation}`);
}
