/**
 * Webhook store bench (issue 8): claim+complete per second in memory and on a real
 * redis-server through ioredis and node-redis (one at a time, and 64 in flight, which
 * both clients pipeline on one connection), Redis commands per callback counted on the
 * client side, the Redis memory a handled payment keeps (its records, 30 days), and the heap of
 * the in-memory store after 1M ids.
 *
 * Redis rows need `redis-server` on the PATH; without it they are skipped with a note.
 *
 * Run: `npx tsx bench/stores.ts` (or `npm run bench`). Tune: BENCH_STORE_OPS, BENCH_ROUNDS.
 *
 * @module
 */
import { mkdir, writeFile } from 'node:fs/promises';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { RedisWebhookStore, type RedisClientLike } from '../src/redis/index.js';
import { MemoryWebhookStore, type WebhookStore } from '../src/webhooks/index.js';
import { CLIENT_KINDS, connect, hasRedisServer, rawCommand, RedisServer } from '../test/helpers/redis.js';
import { envInt, machineInfo, median, table, timeRound } from './harness.js';

const RESULTS_FILE = fileURLToPath(new URL('./results/stores.json', import.meta.url));

export interface StoreBenchRow {
  store: string;
  concurrency: number;
  /** Median claim+complete pairs per second over the rounds. */
  callbacksPerSec: number;
}

let seq = 0;
async function callback(store: WebhookStore): Promise<void> {
  const key = `payment:PAY_BENCH_${++seq}:SUCCESS`;
  const claim = await store.claim(key, 60_000);
  if (!claim.acquired) throw new Error('bench key already claimed');
  await store.complete(key, claim.token, 60_000);
}

async function rate(store: WebhookStore, ops: number, rounds: number, concurrency: number): Promise<number> {
  await timeRound(Math.min(ops, 500), concurrency, () => callback(store)); // warm-up (loads the scripts)
  const samples = [];
  for (let r = 0; r < rounds; r++) samples.push((await timeRound(ops, concurrency, () => callback(store))).opsPerSec);
  return median(samples);
}

/** Wraps a client so every command it sends is counted. */
function counting(client: RedisClientLike): { client: RedisClientLike; sent: string[] } {
  const sent: string[] = [];
  return { client: { sendCommand: (args: string[]) => (sent.push(args[0] ?? ''), rawCommand(client, args)) }, sent };
}

function gc(): void {
  setFlagsFromString('--expose-gc');
  (runInNewContext('gc') as () => void)();
}

/** Heap growth, in MiB, of a MemoryWebhookStore after claiming and completing `ids` keys. */
async function memoryAt(ids: number, maxEntries: number): Promise<{ mib: number; size: number }> {
  gc();
  const before = process.memoryUsage().heapUsed;
  const store = new MemoryWebhookStore({ maxEntries });
  for (let i = 0; i < ids; i++) await callback(store);
  gc();
  const mib = (process.memoryUsage().heapUsed - before) / 2 ** 20;
  return { mib: Math.round(mib * 10) / 10, size: store.size };
}

/** What a handled payment costs in Redis memory, kept `paymentRecordTtlMs` (30 days). */
export interface RedisPaymentBytes {
  /** `used_memory` delta per payment over `payments`, one in ten refunded (Redis's dictionaries included). */
  perPayment: number;
  /** `MEMORY USAGE` of a paid payment's one key, and of a refunded one's three. */
  paid: number;
  refunded: number;
}

/**
 * Hands `payments` payments to a RedisWebhookStore as the webhook handler does (the claim given
 * its payment, a REFUNDED's completion raising its mark), with 20-character payment ids, and
 * measures the memory they keep.
 */
export async function redisBytesPerPayment(
  client: RedisClientLike,
  options: { authenticateWith?: string } = {},
  payments = 10_000,
): Promise<RedisPaymentBytes> {
  const prefix = `bytes:${options.authenticateWith === undefined ? 'plain' : 'mac'}:`;
  const store = new RedisWebhookStore({ client, keyPrefix: prefix, ...options });
  const usedMemory = async () =>
    Number(/used_memory:(\d+)/.exec(String(await rawCommand(client, ['INFO', 'memory'])))?.[1]);
  const handle = async (paymentId: string, status: 'SUCCESS' | 'REFUNDED', rank: number) => {
    const key = `payment:${paymentId}:${status}`;
    const order = { paymentId, rank };
    const claim = await store.claim(key, 30_000, order);
    if (!claim.acquired) throw new Error(`${key} not claimed`);
    await store.complete(key, claim.token, 86_400_000, status === 'REFUNDED' ? order : undefined);
  };
  const before = await usedMemory();
  for (let i = 0; i < payments; i++) {
    const paymentId = `PAY_${String(1e15 + i)}`;
    await handle(paymentId, 'SUCCESS', 1);
    if (i % 10 === 0) await handle(paymentId, 'REFUNDED', 2);
  }
  const perPayment = ((await usedMemory()) - before) / payments;
  const usage = async (key: string) => Number(await rawCommand(client, ['MEMORY', 'USAGE', prefix + key]));
  const first = `PAY_${String(1e15)}`;
  const paid = await usage(`webhook:payment:${first}:SUCCESS`);
  const refunded = paid + (await usage(`webhook:payment:${first}:REFUNDED`)) + (await usage(`webhook-order:${first}`));
  return { perPayment: Math.round(perPayment), paid, refunded };
}

export async function runStoreBench(): Promise<void> {
  const ops = envInt('BENCH_STORE_OPS', 5_000);
  const rounds = envInt('BENCH_ROUNDS', 5);
  const rows: StoreBenchRow[] = [];
  for (const concurrency of [1, 64]) {
    rows.push({
      store: 'memory',
      concurrency,
      callbacksPerSec: await rate(new MemoryWebhookStore(), ops * 10, rounds, concurrency),
    });
  }

  const roundTrips: Record<string, { callback: number; duplicate: number }> = {};
  const bytes: Record<string, RedisPaymentBytes> = {};
  let server: RedisServer | undefined;
  if (!hasRedisServer()) {
    console.log('redis-server is not installed: Redis rows skipped (apt-get install redis-server to run them)');
  } else {
    server = await RedisServer.start();
    try {
      for (const kind of CLIENT_KINDS) {
        const conn = await connect(kind, server.url);
        try {
          const counted = counting(conn.client);
          const store = new RedisWebhookStore({ client: counted.client });
          for (const concurrency of [1, 64]) {
            rows.push({
              store: `redis (${kind})`,
              concurrency,
              callbacksPerSec: await rate(store, ops, rounds, concurrency),
            });
          }
          counted.sent.length = 0;
          await callback(store);
          const perCallback = counted.sent.length;
          counted.sent.length = 0;
          await store.claim(`payment:PAY_BENCH_${seq}:SUCCESS`, 60_000); // a retry of a handled callback
          roundTrips[kind] = { callback: perCallback, duplicate: counted.sent.length };
          if (kind === 'ioredis') {
            bytes['plain'] = await redisBytesPerPayment(conn.client);
            bytes['authenticateWith'] = await redisBytesPerPayment(conn.client, { authenticateWith: 'sk_bench_bytes' });
          }
        } finally {
          await conn.close();
        }
      }
    } finally {
      await server.stop();
    }
  }

  const memory = {
    defaultBound: await memoryAt(1_000_000, 100_000),
    unbounded: await memoryAt(1_000_000, 2_000_000),
  };

  console.log(
    table(
      ['store', 'in flight', 'claim+complete/s'],
      rows.map((r) => [r.store, String(r.concurrency), r.callbacksPerSec.toFixed(0)]),
    ),
  );
  for (const [kind, trips] of Object.entries(roundTrips)) {
    console.log(
      `redis (${kind}): ${trips.callback} round trips per handled callback (goal <= 2), ${trips.duplicate} per duplicate delivery`,
    );
  }
  for (const [variant, kept] of Object.entries(bytes)) {
    console.log(
      `redis, ${variant}: ${kept.perPayment} B of used_memory per handled payment (one in ten refunded), kept 30 days; MEMORY USAGE ${kept.paid} B paid, ${kept.refunded} B refunded`,
    );
  }
  console.log(
    `MemoryWebhookStore after 1M ids: +${memory.defaultBound.mib} MiB heap with the default maxEntries 100000 (${memory.defaultBound.size} kept); ` +
      `+${memory.unbounded.mib} MiB keeping all of them (maxEntries 2000000)`,
  );
  await mkdir(new URL('./results/', import.meta.url), { recursive: true });
  await writeFile(
    RESULTS_FILE,
    `${JSON.stringify({ date: new Date().toISOString(), machine: machineInfo(), config: { ops, rounds }, rows, roundTrips, bytes, memory }, null, 2)}\n`,
  );
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) await runStoreBench();
