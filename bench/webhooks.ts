/**
 * Webhook verification throughput: our Node path, our Web Crypto path, the raw
 * node:crypto floor, stripe's `constructEvent` and svix's `Webhook.verify`, on payloads
 * of the same size, in one run. Rounds of the contenders are interleaved and the
 * median of the rounds is reported, with the ratio of time per verification against
 * the floor (1.00× = as fast as the floor).
 *
 * Run alone: `npx tsx bench/webhooks.ts` (env: BENCH_ROUNDS, BENCH_MS).
 * From another script: `await runWebhookBench()`.
 *
 * @module
 */
import { randomBytes } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { pathToFileURL } from 'node:url';
import Stripe from 'stripe';
import { Webhook } from 'svix';
import { WebhookVerifier } from '../src/webhooks/index.js';
import { BENCH_API_KEY, benchCallback, benchFloor } from './webhook-callback.js';

/** One contender's result. */
export interface WebhookBenchRow {
  name: string;
  /** Median verifications per second over the rounds. */
  opsPerSec: number;
  /** Median nanoseconds per verification. */
  nsPerOp: number;
  /** Time per verification relative to the node:crypto floor (median of per-round ratios; lower is better). */
  vsFloor: number;
}

/** Options of {@link runWebhookBench}. */
export interface WebhookBenchOptions {
  /** Timed rounds per contender. @default 9 */
  rounds?: number;
  /** Target duration of one round in ms. @default 200 */
  roundMs?: number;
  /** Print the table to stdout. @default true */
  print?: boolean;
}

interface Contender {
  name: string;
  /** One verification; sync contenders return undefined, async ones a promise. */
  run: () => unknown;
  async: boolean;
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? (sorted[mid] as number) : ((sorted[mid - 1] as number) + (sorted[mid] as number)) / 2;
}

async function timeRound(contender: Contender, iterations: number): Promise<number> {
  const start = performance.now();
  if (contender.async) {
    for (let i = 0; i < iterations; i++) await contender.run();
  } else {
    for (let i = 0; i < iterations; i++) contender.run();
  }
  return ((performance.now() - start) * 1e6) / iterations; // ns per op
}

/** Calibrates iterations so a round lasts about `roundMs`. */
async function calibrate(contender: Contender, roundMs: number): Promise<number> {
  let iterations = 100;
  for (;;) {
    const ns = await timeRound(contender, iterations);
    const ms = (ns * iterations) / 1e6;
    if (ms > 50 || iterations > 5_000_000) return Math.max(50, Math.round((iterations * roundMs) / ms));
    iterations *= 4;
  }
}

/** Runs the benchmark and returns one row per contender (floor first). */
export async function runWebhookBench(options: WebhookBenchOptions = {}): Promise<WebhookBenchRow[]> {
  const rounds = options.rounds ?? Number(process.env.BENCH_ROUNDS ?? 9);
  const roundMs = options.roundMs ?? Number(process.env.BENCH_MS ?? 200);
  const print = options.print ?? true;

  // A callback as the service sends it, and the floor: what any correct verifier must do at least.
  const now = Date.now();
  const { raw, headers } = await benchCallback(now);
  const floor = await benchFloor(raw);

  // Ours.
  const nodeVerifier = new WebhookVerifier({ apiKey: BENCH_API_KEY, crypto: 'node' });
  const webVerifier = new WebhookVerifier({ apiKey: BENCH_API_KEY, crypto: 'web' });
  const request = { body: raw, headers };

  // Stripe, on a payload of the same size.
  const stripe = new Stripe('sk_test_bench');
  const stripeSecret = `whsec_${randomBytes(24).toString('hex')}`;
  const stripeHeader = stripe.webhooks.generateTestHeaderString({ payload: raw, secret: stripeSecret });
  const stripeRun = () => stripe.webhooks.constructEvent(raw, stripeHeader, stripeSecret);

  // Svix, on a payload of the same size.
  const svix = new Webhook(`whsec_${randomBytes(32).toString('base64')}`);
  const svixId = 'msg_2Lmx3Jq0vZk8pQ';
  const svixDate = new Date(now);
  const svixHeaders = {
    'svix-id': svixId,
    'svix-timestamp': String(Math.floor(now / 1000)),
    'svix-signature': svix.sign(svixId, svixDate, raw),
  };
  const svixRun = () => svix.verify(raw, svixHeaders);

  const contenders: Contender[] = [
    { name: 'floor: JSON.parse + HMAC (KeyObject) + timingSafeEqual', run: floor, async: false },
    { name: 'myr-gateway verifySync (node:crypto)', run: () => nodeVerifier.verifySync(request), async: false },
    { name: 'myr-gateway verify (node:crypto, awaited)', run: () => nodeVerifier.verify(request), async: true },
    { name: 'myr-gateway verify (Web Crypto, awaited)', run: () => webVerifier.verify(request), async: true },
    { name: 'stripe webhooks.constructEvent', run: stripeRun, async: false },
    { name: 'svix Webhook.verify', run: svixRun, async: false },
  ];

  // Every contender must accept its payload before it is timed.
  for (const c of contenders) await c.run();
  if (raw.length !== JSON.stringify(JSON.parse(raw)).length) throw new Error('payload changed');

  const iterations = new Map<Contender, number>();
  for (const c of contenders) iterations.set(c, await calibrate(c, roundMs));
  const samples = new Map<Contender, number[]>(contenders.map((c) => [c, []]));
  for (let round = 0; round < rounds; round++) {
    for (const c of contenders) (samples.get(c) as number[]).push(await timeRound(c, iterations.get(c) as number));
  }

  // Ratios are paired per round (the floor's round ran right before): that cancels most of
  // the drift a shared, loaded machine adds, where a ratio of medians would not.
  const floorSamples = samples.get(contenders[0] as Contender) as number[];
  const rows = contenders.map((c) => {
    const own = samples.get(c) as number[];
    const ns = median(own);
    return {
      name: c.name,
      opsPerSec: 1e9 / ns,
      nsPerOp: ns,
      vsFloor: median(own.map((x, i) => x / (floorSamples[i] as number))),
    };
  });

  if (print) {
    console.log(
      `\nWebhook verification, payload ${raw.length} bytes, ${rounds} rounds of ~${roundMs} ms, medians; vs floor = median of per-round ratios (Node ${process.version})`,
    );
    const width = Math.max(...rows.map((r) => r.name.length));
    console.log(
      `${'contender'.padEnd(width)}  ${'verifications/s'.padStart(15)}  ${'ns/op'.padStart(8)}  ${'vs floor'.padStart(8)}`,
    );
    for (const r of rows) {
      console.log(
        `${r.name.padEnd(width)}  ${Math.round(r.opsPerSec).toLocaleString('en-US').padStart(15)}  ${Math.round(r.nsPerOp).toString().padStart(8)}  ${`${r.vsFloor.toFixed(2)}×`.padStart(8)}`,
      );
    }
  }
  return rows;
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  await runWebhookBench();
}
