/**
 * Client bench: the same `POST /payment/request` (same JSON body shape, a fresh
 * reference_id per request, a Bearer header, JSON response parsed) done by
 *   1. raw fetch + JSON.parse (baseline),
 *   2. bare ky (`ky.post(url, { json, headers }).json()`, ky's defaults),
 *   3. our client (`gateway.payments.create`, token cached after warm-up; request
 *      validation, retry bookkeeping, timeouts, rate-limit headers and zod response
 *      parsing included),
 * against one local node:http server in a child process. Reports the client process's
 * CPU time per request and requests per second at concurrency 1 and 32 (medians of
 * interleaved rounds), and ky/fetch, ours/ky, ours/fetch ratios.
 *
 * Run: `npx tsx bench/client.ts` (or `npm run bench` for everything).
 * Tune: BENCH_REQUESTS (per round), BENCH_ROUNDS, BENCH_WARMUP, BENCH_CONCURRENCY (e.g. "1,32").
 *
 * @module
 */
import { mkdir, writeFile } from 'node:fs/promises';
import { fileURLToPath, pathToFileURL } from 'node:url';
import ky from 'ky';
import { MyrGateway } from '../src/index.js';
import type { PaymentCreateParams } from '../src/index.js';
import {
  compare,
  type Contender,
  type ContenderResult,
  envInt,
  loadPerCore,
  machineInfo,
  pairedRatio,
  table,
} from './harness.js';
import { BENCH_TOKEN, startBenchServer } from './server.js';

/** Goal from issues 2 and 21: over HTTP, our client costs at most 1.10x bare ky in client CPU. */
export const GOAL_OURS_OVER_KY = 1.1;

/** Goal from issue 21: in the in-memory layer, where only our own work shows, at most 1.3x bare ky. */
export const GOAL_LAYER_OURS_OVER_KY = 1.3;

const RESULTS_FILE = fileURLToPath(new URL('./results/client.json', import.meta.url));

export interface ClientBenchOptions {
  requests?: number;
  rounds?: number;
  warmup?: number;
  concurrencies?: number[];
  /** Also run the no-socket "client layer" section (default true; BENCH_LAYER=0 turns it off). */
  layer?: boolean;
  /** Write bench/results/client.json. */
  writeResults?: boolean;
}

interface Ratios {
  kyOverFetch: number;
  oursOverKy: number;
  oursOverFetch: number;
}

/** One section of the bench: the real HTTP round trip, or the client layer alone. */
export interface SectionReport {
  results: Omit<ContenderResult, 'rounds'>[];
  /** CPU and wall time of every round, by `contender@concurrency`. */
  rounds: Record<string, ContenderResult['rounds']>;
  /** Ratios of the median CPU per request, by `c<concurrency>`. */
  ratios: Record<string, Ratios>;
  /** Medians of per-round ratios (rounds run back to back): robust to drift on a loaded machine. */
  pairedRatios: Record<string, Ratios>;
}

export interface ClientBenchReport {
  date: string;
  machine: Record<string, string | number>;
  config: { requests: number; rounds: number; warmup: number; concurrencies: number[] };
  /** Against the local node:http server (the headline figures). */
  http: SectionReport;
  /** With an in-memory fetch: what each client adds on top of fetch itself. */
  layer: SectionReport | undefined;
  /** 1-minute load average per core, before the bench started and when it ended (it adds ~1). */
  loadPerCore: { before: number; after: number };
  /** Goal of issue 2, judged on the http section's ratio of medians at every concurrency. */
  goal: { oursOverKyMax: number; met: boolean; layerOursOverKyMax: number; layerMet: boolean | undefined };
}

let seq = 0;

/** The request every contender sends; reference_id differs per request. */
function params(): PaymentCreateParams {
  seq += 1;
  return {
    amount: 49.9,
    reference_id: `BENCH${seq}`,
    customer_name: 'Aisyah Rahman',
    customer_phone: '60123456789',
    payment_method: 'QR_PAYMENT',
    callback_url: 'https://merchant.example/myr/callback',
    redirect_url: 'https://merchant.example/orders/return',
  };
}

/**
 * A fetch that answers from memory (after reading the request body, as a real fetch
 * would): used by the "client layer" section to take sockets, undici's connection
 * handling and the server out of the measurement, leaving what each client adds.
 */
function cannedFetch(): typeof globalThis.fetch {
  const headers = {
    'content-type': 'application/json',
    'x-ratelimit-limit': '100000',
    'x-ratelimit-remaining': '99999',
    'x-ratelimit-reset': '2000000000',
  };
  const token = JSON.stringify({
    status: 'success',
    data: { access_token: BENCH_TOKEN, token_type: 'Bearer', expires_in: 3600 },
  });
  const payment = JSON.stringify({
    status: 'success',
    data: {
      payment_id: 'PAY_0000000000AB',
      payment_url: 'https://pay.gateway.example/p/PAY_0000000000AB',
      status: 'PROCESSING',
      amount: 49.9,
      currency: 'MYR',
      reference_id: 'REFERENCE',
      expires_in: 900,
      expires_at: '2030-01-01T00:15:00.000Z',
      gateway: {
        behavior: 'REDIRECT_EXTERNAL',
        redirect_url: 'https://bank.gateway.example/authorize/PAY_0000000000AB',
        qr_data_string: null,
      },
    },
  });
  // The answer echoes the request's reference_id, as the service does (the client checks it).
  const [before, after] = payment.split('REFERENCE') as [string, string];
  return async (input, init) => {
    const request = input instanceof Request ? input : new Request(input, init);
    const sent = await request.text();
    if (request.url.endsWith('/auth/token')) return new Response(token, { status: 200, headers });
    const reference = /"reference_id":"(\w+)"/.exec(sent)?.[1] ?? '';
    return new Response(before + reference + after, { status: 200, headers });
  };
}

function contenders(baseUrl: string, fetchImpl?: typeof globalThis.fetch): Contender[] {
  const url = `${baseUrl}/payment/request`;
  const authorization = `Bearer ${BENCH_TOKEN}`;
  const doFetch = fetchImpl ?? ((input: RequestInfo | URL, init?: RequestInit) => fetch(input, init));
  const kyClient = fetchImpl ? ky.create({ fetch: fetchImpl }) : ky;

  const gateway = new MyrGateway({
    baseUrl,
    allowInsecureLoopback: true,
    merchantId: 'MERCHANT_BENCH',
    apiKey: 'bench-api-key-not-a-secret',
    ...(fetchImpl ? { fetch: fetchImpl } : {}),
  });

  return [
    {
      name: 'fetch',
      operation: async () => {
        const response = await doFetch(url, {
          method: 'POST',
          headers: { 'content-type': 'application/json', accept: 'application/json', authorization },
          body: JSON.stringify(params()),
        });
        const text = await response.text();
        if (!response.ok) throw new Error(`fetch: HTTP ${response.status}`);
        return JSON.parse(text) as unknown;
      },
    },
    {
      name: 'ky',
      operation: () => kyClient.post(url, { json: params(), headers: { authorization } }).json(),
    },
    {
      name: 'ours',
      operation: () => gateway.payments.create(params()),
    },
  ];
}

/** Checks once, untimed, that every contender gets the answer it should. */
async function sanityCheck(list: readonly Contender[]): Promise<void> {
  for (const contender of list) {
    const result = (await contender.operation(0)) as { data?: { payment_id?: unknown }; payment_id?: unknown };
    const paymentId = result.data?.payment_id ?? result.payment_id;
    if (typeof paymentId !== 'string' || !paymentId.startsWith('PAY_')) {
      throw new Error(`${contender.name}: unexpected answer ${JSON.stringify(result)}`);
    }
  }
}

const fmt = (n: number, digits = 1) => n.toFixed(digits);

interface SectionConfig {
  requests: number;
  rounds: number;
  warmup: number;
  concurrencies: number[];
}

async function runSection(title: string, list: Contender[], config: SectionConfig): Promise<SectionReport> {
  console.log(`\n${title}`);
  await sanityCheck(list);
  const results: ContenderResult[] = [];
  for (const concurrency of config.concurrencies) {
    const res = await compare(list, {
      concurrency,
      requests: config.requests,
      rounds: config.rounds,
      warmup: config.warmup,
      onRound: (name, round, s) =>
        process.stdout.write(
          `  c=${concurrency} round ${round + 1}/${config.rounds} ${name.padEnd(5)} ` +
            `${fmt(s.cpuUsPerOp)} µs CPU/req  ${fmt(s.opsPerSec, 0)} req/s\n`,
        ),
    });
    results.push(...res);
  }

  const byKey = new Map(results.map((r) => [`${r.name}@${r.concurrency}`, r]));
  const cpu = (name: string, c: number) => byKey.get(`${name}@${c}`)?.medianCpuUsPerOp ?? Number.NaN;
  const samples = (name: string, c: number) => byKey.get(`${name}@${c}`)?.rounds ?? [];
  const ratios: Record<string, Ratios> = {};
  const pairedRatios: Record<string, Ratios> = {};
  for (const c of config.concurrencies) {
    ratios[`c${c}`] = {
      kyOverFetch: cpu('ky', c) / cpu('fetch', c),
      oursOverKy: cpu('ours', c) / cpu('ky', c),
      oursOverFetch: cpu('ours', c) / cpu('fetch', c),
    };
    pairedRatios[`c${c}`] = {
      kyOverFetch: pairedRatio(samples('ky', c), samples('fetch', c)),
      oursOverKy: pairedRatio(samples('ours', c), samples('ky', c)),
      oursOverFetch: pairedRatio(samples('ours', c), samples('fetch', c)),
    };
  }

  const rows = results.map((r) => [
    r.name,
    String(r.concurrency),
    fmt(r.medianCpuUsPerOp),
    fmt(r.medianOpsPerSec, 0),
    `${fmt(r.medianCpuUsPerOp / cpu('fetch', r.concurrency), 2)}x`,
    r.name === 'fetch' ? '' : `${fmt(r.medianCpuUsPerOp / cpu('ky', r.concurrency), 2)}x`,
  ]);
  console.log(`\n${title}: client CPU per request and throughput, medians of ${config.rounds} rounds\n`);
  console.log(table(['contender', 'conc', 'CPU µs/req', 'req/s', 'vs fetch', 'vs ky'], rows));
  console.log('');
  for (const [key, r] of Object.entries(ratios)) {
    const p = pairedRatios[key] as Ratios;
    console.log(
      `${key.padEnd(4)} ratio of medians: ky/fetch ${fmt(r.kyOverFetch, 2)}x  ours/ky ${fmt(r.oursOverKy, 2)}x  ` +
        `ours/fetch ${fmt(r.oursOverFetch, 2)}x   | median of paired rounds: ky/fetch ${fmt(p.kyOverFetch, 2)}x  ` +
        `ours/ky ${fmt(p.oursOverKy, 2)}x  ours/fetch ${fmt(p.oursOverFetch, 2)}x`,
    );
  }
  return {
    results: results.map(({ rounds: _rounds, ...rest }) => rest),
    rounds: Object.fromEntries(results.map((r) => [`${r.name}@${r.concurrency}`, r.rounds])),
    ratios,
    pairedRatios,
  };
}

/** Runs the client bench and prints tables; resolves with the report. */
export async function runClientBench(options: ClientBenchOptions = {}): Promise<ClientBenchReport> {
  const config: SectionConfig = {
    requests: options.requests ?? envInt('BENCH_REQUESTS', 500),
    rounds: options.rounds ?? envInt('BENCH_ROUNDS', 15),
    warmup: options.warmup ?? envInt('BENCH_WARMUP', 1000),
    concurrencies:
      options.concurrencies ??
      (process.env.BENCH_CONCURRENCY ? process.env.BENCH_CONCURRENCY.split(',').map((s) => Number(s.trim())) : [1, 32]),
  };
  const withLayer = options.layer ?? process.env.BENCH_LAYER !== '0';
  const loadBefore = loadPerCore();
  const started = Date.now();
  console.log(
    `client bench: ${config.requests} requests x ${config.rounds} rounds per contender (warm-up ${config.warmup}), ` +
      `concurrency ${config.concurrencies.join(' and ')}`,
  );
  if (loadBefore > 0.25) {
    console.log(
      `  note: the load average is already ${fmt(loadBefore, 2)} per core; other work competes for the CPU, ` +
        'so absolute figures are inflated and noisy (the paired ratios hold up better)',
    );
  }

  const server = await startBenchServer();
  let http: SectionReport;
  try {
    http = await runSection(
      `HTTP: POST /payment/request to node:http in a child process (${server.baseUrl})`,
      contenders(server.baseUrl),
      config,
    );
    const counts = await server.stats();
    const tokenRequests = counts['/api/v1/auth/token'] ?? 0;
    if (tokenRequests !== 1) throw new Error(`expected exactly 1 token request, the server saw ${tokenRequests}`);
  } finally {
    await server.close();
  }
  const layer = withLayer
    ? await runSection(
        'Client layer: same calls with an in-memory fetch (no sockets, no server)',
        contenders('http://127.0.0.1:9/api/v1', cannedFetch()),
        { ...config, requests: config.requests * 2 },
      )
    : undefined;

  const loadAfter = loadPerCore();
  const met = Object.values(http.ratios).every((r) => r.oursOverKy <= GOAL_OURS_OVER_KY);
  const layerMet = layer
    ? Object.values(layer.ratios).every((r) => r.oursOverKy <= GOAL_LAYER_OURS_OVER_KY)
    : undefined;
  console.log(
    `\ngoal ours/ky <= ${GOAL_OURS_OVER_KY.toFixed(2)}x (HTTP, ratio of medians, every concurrency): ${met ? 'MET' : 'NOT MET'}` +
      (layer ? `; in-memory layer <= ${GOAL_LAYER_OURS_OVER_KY.toFixed(2)}x: ${layerMet ? 'MET' : 'NOT MET'}` : '') +
      `  (${((Date.now() - started) / 1000).toFixed(0)} s; load per core before ${fmt(loadBefore, 2)}, after ${fmt(loadAfter, 2)})`,
  );

  const report: ClientBenchReport = {
    date: new Date().toISOString(),
    machine: machineInfo(),
    config,
    http,
    layer,
    loadPerCore: { before: loadBefore, after: loadAfter },
    goal: { oursOverKyMax: GOAL_OURS_OVER_KY, met, layerOursOverKyMax: GOAL_LAYER_OURS_OVER_KY, layerMet },
  };
  if (options.writeResults ?? true) {
    await mkdir(new URL('./results/', import.meta.url), { recursive: true });
    await writeFile(RESULTS_FILE, `${JSON.stringify(report, null, 2)}\n`);
    console.log(`results written to ${RESULTS_FILE}`);
  }
  return report;
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  await runClientBench();
}
