/**
 * `npm run bench`: the client bench (bench/client.ts), then the webhook verification
 * bench (bench/webhooks.ts) when it exists, then the webhook store bench
 * (bench/stores.ts). This is a benchmark, not a test: it prints figures and writes
 * bench/results/*.json; it fails only if a bench itself breaks.
 *
 * @module
 */
import { spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { runClientBench } from './client.js';
import { runStoreBench } from './stores.js';

const WEBHOOKS = fileURLToPath(new URL('./webhooks.ts', import.meta.url));
/** Names bench/webhooks.ts may export its runner under, in order of preference. */
const RUNNER_NAMES = ['runWebhookBench', 'runWebhooksBench', 'runWebhookBenchmarks', 'run', 'default'] as const;

/** Runs `file` in its own node process with the tsx loader, inheriting stdio. */
function runStandalone(file: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', import.meta.resolve('tsx'), file], { stdio: 'inherit' });
    child.once('error', reject);
    child.once('exit', (code, signal) =>
      code === 0 ? resolve() : reject(new Error(`${file} exited with ${signal ?? `code ${code}`}`)),
    );
  });
}

async function runWebhookBench(): Promise<void> {
  if (!existsSync(WEBHOOKS)) {
    console.log('\nwebhook bench: bench/webhooks.ts is not there yet; skipped');
    return;
  }
  console.log('\n=== webhook verification bench (bench/webhooks.ts) ===');
  // Import it only if it exports a runner; a self-running script gets its own process
  // instead, so importing it can never run it twice.
  const source = readFileSync(WEBHOOKS, 'utf8');
  const exportsRunner = RUNNER_NAMES.some((name) =>
    name === 'default'
      ? /\bexport\s+default\b/.test(source)
      : new RegExp(`\\bexport\\s+(?:async\\s+)?(?:function\\s*\\*?\\s*|const\\s+|let\\s+)${name}\\b`).test(source) ||
        new RegExp(`\\bexport\\s*\\{[^}]*\\b${name}\\b[^}]*\\}`).test(source),
  );
  if (exportsRunner) {
    const mod = (await import(WEBHOOKS)) as Record<string, unknown>;
    const runner = RUNNER_NAMES.map((name) => mod[name]).find((value) => typeof value === 'function');
    if (typeof runner === 'function') {
      await (runner as () => unknown)();
      return;
    }
  }
  await runStandalone(WEBHOOKS);
}

console.log('=== client bench (bench/client.ts) ===');
await runClientBench();
await runWebhookBench();
console.log('\n=== webhook store bench (bench/stores.ts) ===');
await runStoreBench();
