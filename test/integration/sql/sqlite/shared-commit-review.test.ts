/**
 * Review of 34426cb (SQLite shared COMMIT): sequences where a run's answer rests on another run's
 * part that is not committed yet, and where a fast run's answer depends on the run let in after
 * it. Each test states what the merchant relies on and fails while the finding stands.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fromSqlite, SqlLedger } from '../../../../src/sql/index.js';

let dir: string;
let files = 0;
beforeAll(() => void (dir = mkdtempSync(join(tmpdir(), 'myr-sqlite-shared-review-'))));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const once = { raiseMark: false, completedTtlMs: 60_000 } as const;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function shop(maxRunMs?: number, lockTimeoutMs = 5000) {
  const file = join(dir, `shop-${++files}.db`);
  const app = new DatabaseSync(file);
  app.exec(`PRAGMA journal_mode = WAL;
    CREATE TABLE orders (id TEXT NOT NULL);
    CREATE TABLE parcels (id INTEGER PRIMARY KEY);
    CREATE TABLE shipments (id TEXT NOT NULL, parcel INTEGER REFERENCES parcels (id) DEFERRABLE INITIALLY DEFERRED)`);
  const ledger = new SqlLedger(fromSqlite(file, maxRunMs === undefined ? {} : { maxRunMs }), { lockTimeoutMs });
  await ledger.ensureSchema();
  const written = (id: string) => Number(app.prepare('SELECT count(*) AS n FROM orders WHERE id = ?').get(id)?.n);
  return { app, ledger, written };
}
const fulfil = (tx: DatabaseSync, id: string) => void tx.prepare('INSERT INTO orders (id) VALUES (?)').run(id);
const breakFk = (tx: DatabaseSync, id: string) =>
  void tx.prepare('INSERT INTO shipments (id, parcel) VALUES (?, 7)').run(id);

describe('review: a refusal read off another run that is not committed', () => {
  it("a second delivery is answered 'duplicate' only once the first one's record is committed", async () => {
    const { app, ledger, written } = await shop();
    let committedAtAnswer: number | undefined;
    // A: the first delivery of PAY_1; B: its redelivery; C: another callback whose write breaks a deferred FK.
    const a = ledger.run('PAY_1', (tx) => fulfil(tx, 'PAY_1'), once);
    const b = ledger.run('PAY_1', (tx) => fulfil(tx, 'PAY_1-twice'), once).then((run) => {
      committedAtAnswer = written('PAY_1');
      return run;
    });
    const c = ledger.run(
      'PAY_2',
      async (tx) => {
        await sleep(20);
        fulfil(tx, 'PAY_2');
        breakFk(tx, 'PAY_2');
      },
      once,
    );
    const [ra, rb, rc] = await Promise.all([a, b, c]);
    expect(rb.outcome).toBe('duplicate');
    expect(rc.outcome).toBe('failed');
    expect(ra.outcome).toBe('processed'); // saved by the in-process re-run
    // ...but B said "already handled" (200) while nothing of A was committed.
    expect(committedAtAnswer, "B answered 'duplicate' before A's record was committed").toBe(1);
    app.close();
  });

  it("…and when the first delivery's re-run cannot land, both deliveries are answered and nothing of the callback is committed", async () => {
    // The defaults scaled down: lockTimeoutMs 1000 -> 100, maxRunMs 2000 -> 300. D is a slow
    // handler (an HTTP call) well within its time.
    const { app, ledger, written } = await shop(300, 100);
    const a = ledger.run('PAY_1', (tx) => fulfil(tx, 'PAY_1'), once);
    const b = ledger.run('PAY_1', (tx) => fulfil(tx, 'PAY_1-twice'), once);
    const c = ledger.run(
      'PAY_2',
      async (tx) => {
        await sleep(10);
        fulfil(tx, 'PAY_2');
        breakFk(tx, 'PAY_2');
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

describe("review: a fast run's answer now rests on the run let in after it", () => {
  it('a run whose work committed is not answered 503 because the handler after it is stuck', async () => {
    const { app, ledger, written } = await shop(300);
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

  it('a handler that waits for the run before it (an in-process queue, an app lock) no longer stalls both to their timeout', async () => {
    const { app, ledger, written } = await shop(300);
    const a = ledger.run('PAY_1', (tx) => fulfil(tx, 'PAY_1'), once);
    const b = ledger.run(
      'PAY_2',
      async (tx) => {
        await a; // e.g. a per-customer lock released when A's answer is sent
        fulfil(tx, 'PAY_2');
      },
      once,
    );
    const started = performance.now();
    const [ra, rb] = await Promise.all([a, b]);
    const took = performance.now() - started;
    expect({ a: ra.outcome, b: rb.outcome, written: [written('PAY_1'), written('PAY_2')] }).toEqual({
      a: 'processed',
      b: 'processed',
      written: [1, 1],
    });
    expect(took).toBeLessThan(100);
    app.close();
  });
});

describe('review: checked sound', () => {
  it('a joined run whose statement RAISE(ROLLBACK)s the whole transaction (caught or not) costs the runs before it nothing: they run again, once', async () => {
    for (const catches of [true, false]) {
      const { app, ledger, written } = await shop();
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
