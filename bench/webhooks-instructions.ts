/**
 * `verifySync` ÷ the node:crypto floor in instructions executed, counted by valgrind's callgrind:
 * independent of the machine's load, so a 10% goal can be judged on a shared machine where the
 * wall-clock ratios of bench/webhooks.ts swing by more than that.
 *
 * Each contender runs in its own `node` under callgrind, once for `small` and once for `large`
 * calls; the difference, divided by `large - small`, is the steady-state cost of one call (the
 * start-up, the module loading and the first compilations are in both runs and cancel). The
 * contenders and the callback are bench/webhook-callback.ts's, bundled from src/ by esbuild.
 * Node runs `--single-threaded`: with V8's compiler and GC threads, when optimized code lands
 * depends on the machine's load, and the same run varied by 2-3% from one run to the next.
 *
 * Needs valgrind (not a test dependency: nothing in the test suite runs this).
 * Run: `npx tsx bench/webhooks-instructions.ts [contender…]` (default: floor verifySync; also
 * `parse`, `parts`, `hmac`, `headers`, `timestamp`, `event`: verifySync's steps one by one, for a
 * breakdown. A step measured alone pays what verifySync pays once for all: flattening the signed
 * string, for one, is charged to the first step that reads it). Env: BENCH_SMALL (20000),
 * BENCH_LARGE (120000), BENCH_REPEATS (1).
 *
 * @module
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { build } from 'esbuild';

/** What each contender runs per call; bundled with its imports into one file for node. */
const WORKER = `
import { createHmac, createSecretKey } from 'node:crypto';
import { WebhookVerifier } from './src/webhooks/index.js';
import { hasTerminalStatus, toEvent } from './src/webhooks/events.js';
import { assertHeadersAgree, readSignedParts } from './src/webhooks/request-parts.js';
import { deriveSigningKeyBytesWeb } from './src/webhooks/signing-scheme.js';
import { parseTimestamp } from './src/webhooks/timestamp-parse.js';
import { BENCH_API_KEY, benchCallback, benchFloor } from './bench/webhook-callback.js';

const contender = process.argv[2];
const count = Number(process.argv[3]);
const { raw, headers } = await benchCallback(Date.now());
const request = { body: raw, headers };
const verifier = new WebhookVerifier({ apiKey: BENCH_API_KEY, crypto: 'node' });
const parts = readSignedParts(request);
const key = createSecretKey(await deriveSigningKeyBytesWeb(BENCH_API_KEY));
const runs = {
  floor: await benchFloor(raw),
  verifySync: () => verifier.verifySync(request),
  // The steps of verifySync one by one, each on what the step before produced.
  parse: () => JSON.parse(raw),
  parts: () => readSignedParts(request),
  hmac: () => createHmac('sha256', key).update(parts.message, 'utf8').digest(),
  headers: () => assertHeadersAgree(parts) ?? 0,
  timestamp: () => parseTimestamp(parts.fields.timestamp),
  event: () => hasTerminalStatus(parts.fields) && toEvent('DEPOSIT', parts.fields, parts.body, parts.signature, 0),
};
const run = runs[contender];
if (!run) throw new Error('unknown contender ' + contender);
let kept;
for (let i = 0; i < count; i++) kept = run();
if (kept === undefined && contender !== 'floor') throw new Error('no result');
`;

/** One contender's steady-state instructions per call. */
export interface InstructionRow {
  readonly contender: string;
  /** Instructions per call, one figure per repeat. */
  readonly perCall: readonly number[];
}

function instructions(worker: string, contender: string, count: number, dir: string): number {
  const out = join(dir, `${contender}-${count}.callgrind`);
  // callgrind reports its totals on stderr; the profile file itself is not read.
  const run = spawnSync(
    'valgrind',
    [
      '--tool=callgrind',
      `--callgrind-out-file=${out}`,
      process.execPath,
      '--single-threaded',
      worker,
      contender,
      String(count),
    ],
    {
      encoding: 'utf8',
      stdio: ['ignore', 'ignore', 'pipe'],
    },
  );
  const log = run.stderr;
  if (run.status !== 0) throw new Error(`${contender} × ${count} failed under valgrind:\n${log}`);
  const match = /Collected : (\d+)/.exec(log);
  if (!match) throw new Error(`no instruction count from valgrind for ${contender} × ${count}:\n${log}`);
  return Number(match[1]);
}

/** Counts each contender's instructions per call (see the module comment). */
export async function runWebhookInstructionBench(
  contenders: readonly string[] = ['floor', 'verifySync'],
  { small = 20_000, large = 120_000, repeats = 1 } = {},
): Promise<InstructionRow[]> {
  const root = resolve(import.meta.dirname, '..');
  const dir = mkdtempSync(join(tmpdir(), 'myr-webhook-instructions-'));
  try {
    const bundle = await build({
      stdin: { contents: WORKER, resolveDir: root, loader: 'ts' },
      bundle: true,
      write: false,
      format: 'esm',
      platform: 'node',
      target: 'node22',
      logLevel: 'error',
    });
    const worker = join(dir, 'worker.mjs');
    writeFileSync(worker, bundle.outputFiles[0]?.text ?? '');
    const rows = contenders.map((contender) => ({ contender, perCall: [] as number[] }));
    // Interleaved, so that whatever changes during the run touches every contender alike.
    for (let repeat = 0; repeat < repeats; repeat++) {
      for (const row of rows) {
        const diff = instructions(worker, row.contender, large, dir) - instructions(worker, row.contender, small, dir);
        row.perCall.push(diff / (large - small));
      }
    }
    return rows;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const env = (name: string, fallback: number) => Number(process.env[name] ?? fallback);
  const args = process.argv.slice(2);
  const rows = await runWebhookInstructionBench(args.length > 0 ? args : undefined, {
    small: env('BENCH_SMALL', 20_000),
    large: env('BENCH_LARGE', 120_000),
    repeats: env('BENCH_REPEATS', 1),
  });
  const floor = rows.find((row) => row.contender === 'floor');
  console.log(
    `instructions per call (callgrind, ${env('BENCH_LARGE', 120_000)} − ${env('BENCH_SMALL', 20_000)} calls, Node ${process.version})`,
  );
  for (const row of rows) {
    const ratios = floor
      ? ` = ${row.perCall.map((n, i) => `${(n / (floor.perCall[i] as number)).toFixed(3)}×`).join(', ')} the floor`
      : '';
    console.log(
      `${row.contender.padEnd(14)} ${row.perCall.map((n) => Math.round(n).toLocaleString('en-US')).join(', ')}${ratios}`,
    );
  }
}
