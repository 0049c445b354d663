/**
 * On SQLite, runs that wait their turn on the ledger's connection share one COMMIT (one writer:
 * a COMMIT's cost is the WAL pages it writes). What a merchant depends on still holds run by run:
 * a run is answered only once its part is committed, a run that fails or times out loses only its
 * own part, and a COMMIT that fails for one run's fault costs the others nothing (they run once
 * more at once, alone). Real SQLite through the runtime's node:sqlite, with the orders in the
 * ledger's file and the app's own connection reading them.
 */
import type { DatabaseSync } from 'node:sqlite';
import { describe, expect, it } from 'vitest';
import { ConfigurationError } from '../../../../src/index.js';
import { fulfil, once, sqliteShop, stopTheRunClock } from '../../../helpers/sqlite-shop.js';

const RUNS = 40;
const keys = Array.from({ length: RUNS }, (_, i) => `order-${i}`);

describe('SQLite: runs waiting their turn share a COMMIT', () => {
  it('each run is answered only once its write is committed (the app reads it then), and runs share COMMITs: fewer moments of commit than runs', async () => {
    const { app, ledger, written, all } = await sqliteShop();
    stopTheRunClock(); // the runs share COMMITs, however busy the machine
    const seenAtAnswer: number[] = [];
    const outcomes = await Promise.all(
      keys.map(async (key) => {
        const run = await ledger.run(key, (tx) => fulfil(tx, key), once);
        // Answered: the app's own connection reads this run's write.
        expect(written(key)).toBe(1);
        seenAtAnswer.push(all());
        return run.outcome;
      }),
    );
    expect(outcomes).toEqual(keys.map(() => 'processed'));
    expect(all()).toBe(RUNS);
    // Runs answered by the same COMMIT see the same count: one COMMIT per run would give RUNS counts.
    expect(new Set(seenAtAnswer).size).toBeLessThan(RUNS / 2);
    // A second delivery of each is a duplicate: nothing runs again.
    const again = await Promise.all(keys.map((key) => ledger.run(key, () => 'again', once)));
    expect(again.map((run) => run.outcome)).toEqual(keys.map(() => 'duplicate'));
    app.close();
  });

  it('a run whose work throws loses only its own write; the runs beside it commit theirs', async () => {
    const { app, ledger, written, all } = await sqliteShop();
    const failing = new Set([keys[3], keys[17], keys[30]]);
    const outcomes = await Promise.all(
      keys.map((key) =>
        ledger.run(
          key,
          (tx) => {
            fulfil(tx, key);
            if (failing.has(key)) throw new Error(`no stock for ${key}`);
          },
          once,
        ),
      ),
    );
    for (const [i, key] of keys.entries()) {
      expect(outcomes[i]?.outcome, key).toBe(failing.has(key) ? 'failed' : 'processed');
      expect(written(key), key).toBe(failing.has(key) ? 0 : 1);
    }
    expect(all()).toBe(RUNS - failing.size);
    // Not recorded: the redelivery of a failed one runs it, once.
    expect((await ledger.run(keys[3] as string, (tx) => fulfil(tx, keys[3] as string), once)).outcome).toBe(
      'processed',
    );
    expect(written(keys[3] as string)).toBe(1);
    app.close();
  });

  it('a run that times out among them is rolled back to its own part at once: its late write refused, the others committed', async () => {
    const { app, ledger, written } = await sqliteShop();
    const slow = keys[5] as string;
    let late: unknown;
    let work: Promise<void> | undefined;
    let finish!: () => void;
    const outcomes = await Promise.all(
      keys.map((key) =>
        ledger.run(
          key,
          (tx) => {
            fulfil(tx, key);
            if (key !== slow) return;
            return (work = (async () => {
              await new Promise<void>((resolve) => (finish = resolve));
              try {
                fulfil(tx, `${key}-late`);
              } catch (error) {
                late = error;
              }
            })());
          },
          key === slow ? { ...once, timeoutMs: 50 } : once,
        ),
      ),
    );
    finish();
    await work;
    for (const [i, key] of keys.entries()) {
      expect(outcomes[i]?.outcome, key).toBe(key === slow ? 'timed_out' : 'processed');
      expect(written(key), key).toBe(key === slow ? 0 : 1);
    }
    expect(late).toBeInstanceOf(ConfigurationError);
    expect(written(`${slow}-late`)).toBe(0);
    app.close();
  });

  it("a COMMIT that fails for one run's fault (a deferred foreign key) costs the others nothing: they run once more, alone, and commit once; that run fails alone", async () => {
    const { app, ledger, written, all } = await sqliteShop();
    stopTheRunClock(); // the runs after the broken one share its COMMIT, however busy the machine.
    const broken = keys[0] as string;
    const runsOf = new Map<string, number>();
    const outcomes = await Promise.all(
      keys.map((key) =>
        ledger.run(
          key,
          (tx) => {
            runsOf.set(key, (runsOf.get(key) ?? 0) + 1);
            fulfil(tx, key);
            // Parcel 7 does not exist: SQLite refuses the COMMIT that holds this write.
            if (key === broken) tx.prepare('INSERT INTO shipments (id, parcel) VALUES (?, 7)').run(key);
          },
          once,
        ),
      ),
    );
    expect(outcomes[0]).toMatchObject({ outcome: 'failed', error: expect.objectContaining({ errcode: 787 }) });
    for (const [i, key] of keys.entries()) {
      if (key === broken) continue;
      expect(outcomes[i]?.outcome, key).toBe('processed');
      expect(written(key), key).toBe(1);
    }
    expect(written(broken)).toBe(0);
    expect(all()).toBe(RUNS - 1);
    // Those that shared its COMMIT ran once more; none ran more than twice.
    expect([...runsOf.values()].some((n) => n === 2)).toBe(true);
    expect(Math.max(...runsOf.values())).toBeLessThanOrEqual(2);
    app.close();
  });

  it('a work that ends the shared transaction itself (COMMIT or ROLLBACK through tx) never makes a double: every order is written once after the redeliveries', async () => {
    for (const ending of ['COMMIT; BEGIN', 'ROLLBACK; BEGIN', 'ROLLBACK']) {
      const { app, ledger, written } = await sqliteShop();
      const rogue = keys[8] as string;
      const work = (key: string) => (tx: DatabaseSync) => {
        fulfil(tx, key);
        if (key === rogue) tx.exec(ending);
      };
      const first = await Promise.all(keys.map((key) => ledger.run(key, work(key), once)));
      // A run committed by the rogue COMMIT before its own was refused is a duplicate when it goes again.
      expect(
        first.every((run) => ['processed', 'duplicate', 'failed', 'in_flight', 'unavailable'].includes(run.outcome)),
      ).toBe(true);
      // Every order the first deliveries answered processed (or duplicate) is committed.
      for (const [i, key] of keys.entries())
        if (first[i]?.outcome === 'processed' || first[i]?.outcome === 'duplicate')
          expect(written(key), `${ending} ${key}`).toBe(1);
      // The gateway redelivers what was not answered processed; a duplicate runs nothing.
      for (const key of keys) await ledger.run(key, (tx) => (key === rogue ? undefined : fulfil(tx, key)), once);
      for (const key of keys) expect(written(key), `${ending} ${key}`).toBeLessThanOrEqual(1);
      for (const key of keys) if (key !== rogue) expect(written(key), `${ending} ${key}`).toBe(1);
      app.close();
    }
  });

  it('a transaction that is not a ledger run (its time unbounded: the outbox, a prune) never joins: the runs before it are answered while it is still open', async () => {
    const { app, client, ledger, all } = await sqliteShop();
    const runs = keys.slice(0, 8).map((key) => ledger.run(key, (tx) => fulfil(tx, key), once));
    const outside = client.begin(5000);
    const answered = await Promise.race([
      Promise.all(runs).then((done) => done.map((run) => run.outcome)),
      new Promise((resolve) => setTimeout(resolve, 1500, 'still waiting')),
    ]);
    expect(answered).toEqual(keys.slice(0, 8).map(() => 'processed'));
    const session = await outside;
    await session.query('INSERT INTO orders (id) VALUES (?)', ['outside']);
    await session.commit(undefined);
    expect(all()).toBe(9);
    app.close();
  });
});
