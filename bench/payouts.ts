/**
 * SqlPayouts bench (issue 32), on SQLite (node:sqlite, WAL) against the mock served over real
 * HTTP on 127.0.0.1:
 * - the service's limit lifted (mock and client unpaced): a drain of N staged payouts, in
 *   payouts per second, against the floor of the same client calling `withdrawals.create` with
 *   as many in flight as the worker's batch (10), and in a plain loop (1 in flight), side by
 *   side in interleaved rounds (goal: drain / floor at 10 in flight >= 0.8);
 * - the limit on (50 per 2 s, a shortened window so the bench takes seconds): the drain of 150
 *   payouts, paced through the database, against the ideal (the window's starts: 4 s; goal <= 1.1),
 *   and the 429s it met.
 *
 * Run: `npx tsx bench/payouts.ts` (or `npm run bench`). Tune: BENCH_PAYOUTS, BENCH_ROUNDS.
 *
 * @module
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { MemoryRateLimiter, MemoryTokenStore, MyrGateway } from '../src/index.js';
import { SqlPayouts, fromSqlite } from '../src/sql/index.js';
import { createMockGateway, type MockGateway } from '../src/testing/index.js';
import { envInt, machineInfo, median, runConcurrent, table } from './harness.js';

const RESULTS_FILE = fileURLToPath(new URL('./results/payouts.json', import.meta.url));
const BATCH = 10;
let seq = 0;
const params = () => ({
  amount: '250.00',
  reference_id: `PAYOUTBENCH${process.pid}x${++seq}`,
  bank_code: 'PBBEMYKL',
  account_number: '5140123456789',
  account_name: 'Tan Wei Ming',
});

async function stageMany<Tx>(payouts: SqlPayouts<Tx>, count: number): Promise<void> {
  await payouts.transaction(async ({ tx }) => {
    for (let i = 0; i < count; i++) await payouts.stage(tx, params());
  });
}

function client(baseUrl: string, mock: MockGateway, paced: boolean): MyrGateway {
  return new MyrGateway({
    baseUrl,
    ...mock.merchant,
    allowInsecureLoopback: true,
    tokenStore: new MemoryTokenStore(),
    rateLimiter: paced ? new MemoryRateLimiter() : false,
  });
}

export async function runPayoutsBench(): Promise<void> {
  const count = envInt('BENCH_PAYOUTS', 1_000);
  const rounds = envInt('BENCH_ROUNDS', 5);
  const dir = mkdtempSync(join(tmpdir(), 'myr-payouts-bench-'));
  const unlimited = createMockGateway({ rateLimits: false });
  const limited = createMockGateway({ rateLimits: { withdraw: 50 }, rateLimitWindowMs: 2000 });
  const [open, paced] = await Promise.all([unlimited.serve(), limited.serve()]);
  try {
    const payouts = new SqlPayouts(fromSqlite(join(dir, 'shop.db')), {
      onRefused: () => undefined,
      onSettled: () => undefined,
    });
    await payouts.ensureSchema();
    const gateway = client(open.baseUrl, unlimited, false);
    const worker = payouts.worker(gateway, { batchSize: BATCH, pace: false });
    const drainRates: number[] = [];
    const floorRates: number[] = [];
    const loopRates: number[] = [];
    await gateway.withdrawals.create(params()); // the token, fetched once before any round
    for (let round = 0; round < rounds; round++) {
      await stageMany(payouts, count);
      let started = performance.now();
      const report = await worker.drain();
      drainRates.push(report.sent / ((performance.now() - started) / 1000));
      if (report.sent !== count) throw new Error(`the drain sent ${report.sent} of ${count}`);
      started = performance.now();
      await runConcurrent(count, BATCH, () => gateway.withdrawals.create(params()));
      floorRates.push(count / ((performance.now() - started) / 1000));
      started = performance.now();
      await runConcurrent(Math.min(count, 300), 1, () => gateway.withdrawals.create(params()));
      loopRates.push(Math.min(count, 300) / ((performance.now() - started) / 1000));
      unlimited.reset();
    }

    const limitedCount = 150;
    const limitedPayouts = new SqlPayouts(fromSqlite(join(dir, 'shop.db')), {
      table: 'paced_payouts',
      onRefused: () => undefined,
      onSettled: () => undefined,
    });
    await limitedPayouts.ensureSchema();
    await stageMany(limitedPayouts, limitedCount);
    const limitedWorker = limitedPayouts.worker(client(paced.baseUrl, limited, true), {
      batchSize: BATCH,
      pace: { limit: 50, windowMs: 2000 },
    });
    const started = performance.now();
    const limitedReport = await limitedWorker.drain();
    const limitedMs = performance.now() - started;
    const idealMs = (Math.ceil(limitedCount / 50) - 1) * 2000;
    const rateLimited = limited.requests.filter((r) => r.endpoint === 'withdraw' && r.status === 429).length;

    const row = {
      payouts: count,
      drainPerSec: median(drainRates),
      floorPerSec: median(floorRates),
      loopPerSec: median(loopRates),
      limited: { payouts: limitedCount, sent: limitedReport.sent, ms: limitedMs, idealMs, rateLimited },
    };
    console.log(
      table(
        [
          'SQLite (WAL)',
          'payouts/s',
          'floor: create/s, 10 in flight',
          'ratio (goal >= 0.8)',
          'create/s in a loop',
          'ratio to the loop',
        ],
        [
          [
            `drain of ${count}, limit lifted`,
            row.drainPerSec.toFixed(0),
            row.floorPerSec.toFixed(0),
            `${(row.drainPerSec / row.floorPerSec).toFixed(2)}x`,
            row.loopPerSec.toFixed(0),
            `${(row.drainPerSec / row.loopPerSec).toFixed(2)}x`,
          ],
        ],
      ),
    );
    console.log(
      table(
        ['limit on: 50 per 2 s', 'sent', 'drain ms', 'ideal ms', 'ratio (goal <= 1.1)', '429s'],
        [
          [
            `drain of ${limitedCount}`,
            String(limitedReport.sent),
            limitedMs.toFixed(0),
            String(idealMs),
            `${(limitedMs / idealMs).toFixed(2)}x`,
            String(rateLimited),
          ],
        ],
      ),
    );
    await mkdir(fileURLToPath(new URL('./results/', import.meta.url)), { recursive: true });
    await writeFile(RESULTS_FILE, `${JSON.stringify({ machine: machineInfo(), rounds, row }, null, 2)}\n`);
  } finally {
    await Promise.all([open.close(), paced.close()]);
    rmSync(dir, { recursive: true, force: true });
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) await runPayoutsBench();
