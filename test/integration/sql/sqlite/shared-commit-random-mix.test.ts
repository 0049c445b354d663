/**
 * A seeded random mix of deliveries on one SQLite ledger whose runs share COMMITs (duplicates, REFUNDED/SUCCESS
 * pairs, fast, awaiting, slow, throwing, hanging and deferred-FK-breaking handlers), checking at
 * each answer what the gateway is told against what the app's own connection reads.
 */
import type { DatabaseSync } from 'node:sqlite';
import { describe, expect, it } from 'vitest';
import { fromSqlite, SqlLedger } from '../../../../src/sql/index.js';
import { lifecycleRank, canSupersede } from '../../../../src/webhooks/lifecycle.js';
import { paymentKey } from '../../../../src/webhooks/payment-key.js';
import { seededRandom } from '../../../helpers/seeded-random.js';
import { sleep, sqliteShop } from '../../../helpers/sqlite-shop.js';

const tally: Record<string, number> = {};

type Kind = 'fast' | 'tick' | 'slow' | 'throw' | 'fk' | 'hang' | 'commits' | 'rollsback' | 'commitsThrows';

async function round(seed: number, mix: 'all' | 'fast' | 'refusals' | 'misuse' | 'tight' | 'two') {
  const random = seededRandom(seed);
  const { app, ledger, written } = await sqliteShop({ maxRunMs: 150, lockTimeoutMs: mix === 'tight' ? 40 : 5000 });
  const other = new SqlLedger(fromSqlite(app, { maxRunMs: 150 }), { lockTimeoutMs: 5000 });
  const problems: string[] = [];
  const deliveries: Promise<void>[] = [];
  const payments = 12;
  const pick = (): Kind => {
    const r = random();
    if (mix === 'misuse')
      return r < 0.6
        ? 'fast'
        : r < 0.7
          ? 'tick'
          : r < 0.78
            ? 'commits'
            : r < 0.86
              ? 'rollsback'
              : r < 0.92
                ? 'commitsThrows'
                : 'throw';
    if (mix === 'two') return r < 0.7 ? 'fast' : r < 0.85 ? 'tick' : r < 0.95 ? 'throw' : 'fk';
    if (mix === 'tight') return r < 0.6 ? 'fast' : r < 0.8 ? 'tick' : r < 0.9 ? 'hang' : 'fk';
    if (mix === 'refusals') return r < 0.85 ? 'fast' : r < 0.95 ? 'tick' : 'throw';
    if (mix === 'fast') return r < 0.7 ? 'fast' : r < 0.9 ? 'tick' : r < 0.97 ? 'throw' : 'fk';
    return r < 0.55 ? 'fast' : r < 0.7 ? 'tick' : r < 0.76 ? 'slow' : r < 0.86 ? 'throw' : r < 0.93 ? 'fk' : 'hang';
  };
  for (let p = 0; p < payments; p++) {
    for (const status of ['SUCCESS', 'REFUNDED']) {
      const key = paymentKey(`PAY_${p}`, status);
      const copies = 1 + Math.floor(random() * 3);
      for (let c = 0; c < copies; c++) {
        const kind = pick();
        const delay = mix === 'all' ? Math.floor(random() * 12) : 0;
        deliveries.push(
          (async () => {
            await sleep(delay);
            const run = await (mix === 'two' && random() < 0.5 ? other : ledger).run(
              key,
              async (tx: DatabaseSync) => {
                if (kind === 'tick') await new Promise((r) => setImmediate(r));
                if (kind === 'slow') await sleep(15);
                if (kind === 'hang') await new Promise(() => undefined);
                tx.prepare('INSERT INTO orders (id) VALUES (?)').run(key);
                if (kind === 'throw') throw new Error('no stock');
                if (kind === 'commits' || kind === 'commitsThrows') tx.exec('COMMIT');
                if (kind === 'rollsback') tx.exec('ROLLBACK');
                if (kind === 'commitsThrows') throw new Error('after commit');
                if (kind === 'fk') tx.prepare('INSERT INTO shipments (id, parcel) VALUES (?, 7)').run(key);
              },
              {
                order: { paymentId: `PAY_${p}`, rank: lifecycleRank(status) },
                raiseMark: canSupersede(status),
                completedTtlMs: 60_000,
                ...(mix === 'tight' ? { timeoutMs: 5 + Math.floor(random() * 30) } : {}),
              },
            );
            tally[`${mix}:${run.outcome}`] = (tally[`${mix}:${run.outcome}`] ?? 0) + 1;
            const now = written(key);
            const refunded = written(paymentKey(`PAY_${p}`, 'REFUNDED'));
            if (run.outcome === 'processed' && now !== 1) problems.push(`${key} ${kind} processed, written ${now}`);
            if (run.outcome === 'duplicate' && now !== 1) problems.push(`${key} ${kind} duplicate, written ${now}`);
            if (run.outcome === 'superseded' && refunded !== 1)
              problems.push(`${key} ${kind} superseded, refunded written ${refunded}`);
            if (now > 1) problems.push(`${key} written ${now} times`);
          })(),
        );
      }
    }
  }
  const all = Promise.all(deliveries);
  const hung = await Promise.race([all.then(() => false), sleep(20_000).then(() => true)]);
  app.close();
  return { problems, hung };
}

describe('a random mix of deliveries on one SQLite ledger', () => {
  it('every 200 answer rests on a committed record, nothing is written twice, every delivery is answered', async () => {
    const found: string[] = [];
    for (let seed = 1; seed <= 180; seed++) {
      const mix = (['all', 'fast', 'refusals', 'misuse', 'tight', 'two'] as const)[seed % 6]!;
      const { problems, hung } = await round(seed, mix);
      if (hung) found.push(`seed ${seed} ${mix}: hung`);
      for (const p of problems) found.push(`seed ${seed} ${mix}: ${p}`);
    }
    if (process.env.TALLY) console.log(tally);
    expect(found).toEqual([]);
  }, 120_000);
});
