/**
 * The SQLite shared COMMIT, run by run: a refusal that reads another run's part before its
 * COMMIT is answered with that COMMIT (in flight if it fails), and a fast run's answer waits for,
 * but is never turned into a 503 by, the run let in after it.
 */
import { describe, expect, it } from 'vitest';
import { breakForeignKey, fulfil, once, sleep, sqliteShop, stopTheRunClock } from '../../../helpers/sqlite-shop.js';

describe('a refusal read off another run that is not committed', () => {
  it("a second delivery is answered 'duplicate' only once the first one's record is committed", async () => {
    const { app, ledger, written } = await sqliteShop();
    let committedAtAnswer: number | undefined;
    // A: the first delivery of PAY_1; B: its redelivery, which reads A's part before A's COMMIT;
    // C: another callback let in after B, which keeps that COMMIT waiting a while.
    const a = ledger.run('PAY_1', (tx) => fulfil(tx, 'PAY_1'), once);
    const b = ledger
      .run('PAY_1', (tx) => fulfil(tx, 'PAY_1-twice'), once)
      .then((run) => {
        committedAtAnswer = written('PAY_1');
        return run;
      });
    const c = ledger.run(
      'PAY_2',
      async (tx) => {
        await sleep(20);
        fulfil(tx, 'PAY_2');
      },
      once,
    );
    const [ra, rb, rc] = await Promise.all([a, b, c]);
    expect({ a: ra.outcome, b: rb.outcome, c: rc.outcome, committedAtAnswer }).toEqual({
      a: 'processed',
      b: 'duplicate',
      c: 'processed',
      committedAtAnswer: 1,
    });
    expect(written('PAY_1-twice')).toBe(0);
    app.close();
  });

  it("a redelivery read off a part whose shared COMMIT then fails is not 'duplicate': in_flight (409, redelivered), and the first delivery runs again and commits once", async () => {
    const { app, ledger, written } = await sqliteShop();
    stopTheRunClock(); // A, B and C share one transaction, however busy the machine.
    // A: the first delivery of PAY_1; B: its redelivery; C: another callback whose write breaks a deferred FK.
    const a = ledger.run('PAY_1', (tx) => fulfil(tx, 'PAY_1'), once);
    const b = ledger.run('PAY_1', (tx) => fulfil(tx, 'PAY_1-twice'), once);
    const c = ledger.run(
      'PAY_2',
      async (tx) => {
        await sleep(20);
        fulfil(tx, 'PAY_2');
        breakForeignKey(tx, 'PAY_2');
      },
      once,
    );
    const [ra, rb, rc] = await Promise.all([a, b, c]);
    expect({ a: ra.outcome, b: rb.outcome, c: rc.outcome }).toEqual({
      a: 'processed',
      b: 'in_flight',
      c: 'failed',
    });
    expect([written('PAY_1'), written('PAY_1-twice'), written('PAY_2')]).toEqual([1, 0, 0]);
    app.close();
  });

  it("…and when the first delivery's re-run cannot land, both deliveries are answered and nothing of the callback is committed", async () => {
    // The defaults scaled down: lockTimeoutMs 1000 -> 100, maxRunMs 2000 -> 300. D is a slow
    // handler (an HTTP call) well within its time.
    const { app, ledger, written } = await sqliteShop({ maxRunMs: 300, lockTimeoutMs: 100 });
    const a = ledger.run('PAY_1', (tx) => fulfil(tx, 'PAY_1'), once);
    const b = ledger.run('PAY_1', (tx) => fulfil(tx, 'PAY_1-twice'), once);
    const c = ledger.run(
      'PAY_2',
      async (tx) => {
        await sleep(10);
        fulfil(tx, 'PAY_2');
        breakForeignKey(tx, 'PAY_2');
      },
      once,
    );
    const d = ledger.run(
      'PAY_3',
      async (tx) => {
        await sleep(150);
        fulfil(tx, 'PAY_3');
      },
      once,
    );
    const [ra, rb] = await Promise.all([a, b, c, d]);
    const ledgerRow = Number(
      app.prepare("SELECT count(*) AS n FROM myr_webhook_ledger WHERE ledger_key = 'PAY_1'").get()?.n ?? 0,
    );
    // Nothing of PAY_1 committed and no run of it still going, yet its redelivery was answered
    // 'duplicate' (200: "already handled"; the gateway stops on it).
    expect({ a: ra.outcome, b: rb.outcome, written: written('PAY_1'), ledgerRow }).not.toEqual({
      a: 'in_flight',
      b: 'duplicate',
      written: 0,
      ledgerRow: 0,
    });
    app.close();
  });
});

describe("a fast run's answer and the run let in after it", () => {
  it('a run whose work committed is not answered 503 because the handler after it is stuck', async () => {
    const { app, ledger, written } = await sqliteShop({ maxRunMs: 300 });
    const a = ledger.run('PAY_1', (tx) => fulfil(tx, 'PAY_1'), once);
    // B arrives while A holds the connection (A's work is synchronous, so B is queued behind A
    // and A's transaction stays open for it); B's handler hangs (a stuck HTTP call).
    const b = ledger.run('PAY_2', () => new Promise(() => undefined), once);
    const [ra, rb] = await Promise.all([a, b]);
    expect(rb.outcome).toBe('timed_out');
    expect(written('PAY_1')).toBe(1); // A's write did commit (when B was rolled back)...
    expect(ra.outcome).toBe('processed'); // ...but A was answered 'unavailable' (503)
    app.close();
  });

  it('a handler that waits for the run before it (an in-process queue, an app lock) stalls at most once: that run is processed, and runs then commit alone, so the same pattern processes both', async () => {
    const { app, ledger, written } = await sqliteShop({ maxRunMs: 300 });
    const pair = async (first: string, second: string) => {
      const a = ledger.run(first, (tx) => fulfil(tx, first), once);
      const b = ledger.run(
        second,
        async (tx) => {
          await a; // e.g. a per-customer lock released when A's answer is sent
          fulfil(tx, second);
        },
        once,
      );
      const [ra, rb] = await Promise.all([a, b]);
      return [ra.outcome, rb.outcome];
    };
    // The first pair that shares a transaction stalls: B waits for A's answer and A for the COMMIT
    // B's part is in, so B is given up at its time (503, redelivered). (A busy machine can
    // deschedule the process past the transaction's 5 ms between A and B: that pair commits alone
    // and the next one meets the stall.)
    const seen: string[][] = [];
    for (let i = 0; i < 5 && !seen.some(([, b]) => b === 'timed_out'); i++)
      seen.push(await pair(`PAY_${i}A`, `PAY_${i}B`));
    expect(seen.at(-1)).toEqual(['processed', 'timed_out']);
    // Then the runs commit alone: nothing waits for a run let in after it. (With the clock held,
    // the pause stays on and the transaction stays open: were the pause not on, they would stall.)
    stopTheRunClock();
    expect(await pair('PAY_LATER_A', 'PAY_LATER_B')).toEqual(['processed', 'processed']);
    expect([...seen.keys()].map((i) => written(`PAY_${i}A`))).toEqual(seen.map(() => 1));
    expect([written('PAY_LATER_A'), written('PAY_LATER_B')]).toEqual([1, 1]);
    app.close();
  });
});

describe('a transaction SQLite rolls back itself', () => {
  it('a joined run whose statement RAISE(ROLLBACK)s the whole transaction (caught or not) costs the runs before it nothing: they run again, once', async () => {
    for (const catches of [true, false]) {
      const { app, ledger, written } = await sqliteShop();
      app.exec(`CREATE TABLE vetoed (id TEXT);
        CREATE TRIGGER veto BEFORE INSERT ON vetoed BEGIN SELECT RAISE(ROLLBACK, 'vetoed'); END`);
      const runs = new Map<string, number>();
      const keys = ['K0', 'K1', 'K2', 'K3', 'K4', 'K5'];
      const outcomes = await Promise.all(
        keys.map((key) =>
          ledger.run(
            key,
            (tx) => {
              runs.set(key, (runs.get(key) ?? 0) + 1);
              fulfil(tx, key);
              if (key !== 'K3') return;
              try {
                tx.prepare('INSERT INTO vetoed (id) VALUES (?)').run(key);
              } catch (error) {
                if (!catches) throw error;
              }
            },
            once,
          ),
        ),
      );
      for (const [i, key] of keys.entries()) {
        expect(outcomes[i]?.outcome, `${catches} ${key}`).toBe(key === 'K3' ? 'failed' : 'processed');
        expect(written(key), `${catches} ${key}`).toBe(key === 'K3' ? 0 : 1);
        expect(runs.get(key) ?? 0).toBeLessThanOrEqual(2);
      }
      app.close();
    }
  });
});
