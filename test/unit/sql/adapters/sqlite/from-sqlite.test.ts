import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { inspect } from 'node:util';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { ConfigurationError } from '../../../../../src/index.js';
import { fromSqlite, SqlLedger } from '../../../../../src/sql/index.js';

let dir: string;
let files = 0;
beforeAll(() => void (dir = mkdtempSync(join(tmpdir(), 'myr-from-sqlite-'))));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
afterEach(() => vi.restoreAllMocks());

/** A fresh database file with an orders table, and the app's own connection to it. */
function shop(): { file: string; app: DatabaseSync } {
  const file = join(dir, `shop-${++files}.db`);
  const app = new DatabaseSync(file);
  app.exec('CREATE TABLE orders (id TEXT)');
  return { file, app };
}
const once = { raiseMark: false, completedTtlMs: 60_000 } as const;
const orders = (app: DatabaseSync) => app.prepare('SELECT count(*) AS n FROM orders').get()?.n;

describe('fromSqlite', () => {
  it('on a runtime without node:sqlite: a ConfigurationError that names the Node version that has it', () => {
    vi.spyOn(process, 'getBuiltinModule').mockReturnValue(undefined);
    expect(() => fromSqlite(join(dir, 'never-created.db'))).toThrow(ConfigurationError);
    expect(() => fromSqlite(join(dir, 'never-created.db'))).toThrow(/Node 22\.13 or later/);
  });

  it("refuses ':memory:', '' and a DatabaseSync of ':memory:': each worker of a cluster would keep its own ledger", () => {
    const memory = new DatabaseSync(':memory:');
    for (const given of [':memory:', '', memory]) {
      expect(() => fromSqlite(given)).toThrow(ConfigurationError);
      expect(() => fromSqlite(given)).toThrow(
        /each worker of a cluster would keep its own ledger, so a retry that reaches another worker fulfils the payment a second time/,
      );
    }
    memory.close();
    // @ts-expect-error: not a DatabaseSync
    expect(() => fromSqlite({ run() {} })).toThrow(/file path or a node:sqlite DatabaseSync/);
  });

  it("given the app's DatabaseSync, runs on a connection of its own to the same file: tx is not the app's, and its writes commit with the claim", async () => {
    const { app } = shop();
    const ledger = new SqlLedger(fromSqlite(app));
    await ledger.ensureSchema();
    const run = await ledger.run('k', (tx) => (tx.prepare("INSERT INTO orders VALUES ('o1')").run(), tx === app), once);
    expect(run).toEqual({ outcome: 'processed', value: false });
    expect(orders(app)).toBe(1);
    expect(await ledger.run('k', () => 'again', once)).toEqual({ outcome: 'duplicate' });
    app.close();
  });

  it("tx refuses close() (the connection is the ledger's), and a log shows nothing of it but what it is", async () => {
    const { file } = shop();
    const ledger = new SqlLedger(fromSqlite(file));
    await ledger.ensureSchema();
    const run = await ledger.run(
      'k',
      (tx) => {
        expect(inspect(tx, { showProxy: true, showHidden: true })).not.toContain(file);
        tx.close();
      },
      once,
    );
    expect(run).toMatchObject({
      outcome: 'failed',
      error: expect.objectContaining({ message: expect.stringMatching(/close your own DatabaseSync, never tx/) }),
    });
    expect((await ledger.run('k', () => 'still open', once)).outcome).toBe('processed');
  });

  it('one connection runs one transaction at a time: a second run waits lockTimeoutMs, then is in_flight without running', async () => {
    const { file } = shop();
    const ledger = new SqlLedger(fromSqlite(file), { lockTimeoutMs: 50 });
    await ledger.ensureSchema();
    let release!: () => void;
    const first = ledger.run('a', () => new Promise<void>((resolve) => (release = resolve)), once);
    let ran = false;
    const second = await ledger.run('b', () => void (ran = true), once);
    release();
    expect(second).toEqual({ outcome: 'in_flight' });
    expect(ran).toBe(false);
    expect((await first).outcome).toBe('processed');
    expect((await ledger.run('b', () => 'now', once)).outcome).toBe('processed');
  });

  it('runs waiting their turn are each turned away at their own lockTimeoutMs, the shorter first whatever their order; one whose turn comes in time runs', async () => {
    const { file } = shop();
    const client = fromSqlite(file);
    const patient = new SqlLedger(client, { lockTimeoutMs: 10_000 });
    const hasty = new SqlLedger(client, { lockTimeoutMs: 50 });
    await patient.ensureSchema();
    let release!: () => void;
    const first = patient.run('a', () => new Promise<void>((resolve) => (release = resolve)), once);
    const settled: string[] = [];
    const queuedFirst = patient.run('b', () => 'b ran', once).finally(() => settled.push('b'));
    const queuedSecond = hasty.run('c', () => 'c ran', once).finally(() => settled.push('c'));
    expect(await queuedSecond).toEqual({ outcome: 'in_flight' });
    expect(settled).toEqual(['c']);
    release();
    expect((await first).outcome).toBe('processed');
    expect(await queuedFirst).toEqual({ outcome: 'processed', value: 'b ran' });
  });

  it("a run's session refuses statements once its transaction ended (the connection may be the next run's by then)", async () => {
    const { file, app } = shop();
    const client = fromSqlite(file);
    const ended = await client.begin(1000);
    await ended.rollback();
    await expect(ended.query("INSERT INTO orders VALUES ('late')", [])).rejects.toBeInstanceOf(ConfigurationError);
    const next = await client.begin(1000);
    await next.commit(undefined);
    await expect(next.query("INSERT INTO orders VALUES ('late')", [])).rejects.toBeInstanceOf(ConfigurationError);
    expect(orders(app)).toBe(0);
    app.close();
  });

  it('a timed-out run lets go at once: rolled back and the write lock free while its work still awaits; its tx and statements then refuse, nothing written', async () => {
    const { file, app } = shop();
    const ledger = new SqlLedger(fromSqlite(file), { lockTimeoutMs: 2000 });
    await ledger.ensureSchema();
    let finish!: () => void;
    let late: unknown;
    let work!: Promise<void>;
    const timedOut = await ledger.run(
      'k',
      (tx) =>
        (work = (async () => {
          const insert = tx.prepare("INSERT INTO orders VALUES ('o1')");
          insert.run();
          await new Promise<void>((resolve) => (finish = resolve));
          for (const send of [
            () => insert.run(),
            () => tx.exec("INSERT INTO orders VALUES ('o2')"),
            () => tx.prepare('SELECT 1'),
          ]) {
            try {
              send();
            } catch (error) {
              late = error;
            }
          }
        })()),
      { ...once, timeoutMs: 20 },
    );
    expect(timedOut).toEqual({ outcome: 'timed_out' });
    // The work still awaits, and the app's own connection can write: the lock was let go.
    app.exec('BEGIN IMMEDIATE');
    app.exec("INSERT INTO orders VALUES ('app')");
    app.exec('COMMIT');
    expect(orders(app)).toBe(1);
    finish();
    await work;
    expect(late).toBeInstanceOf(ConfigurationError);
    expect(orders(app)).toBe(1);
    expect(
      (await ledger.run('k', (tx) => void tx.prepare("INSERT INTO orders VALUES ('o1')").run(), once)).outcome,
    ).toBe('processed');
    expect(orders(app)).toBe(2);
    app.close();
  });

  it('a work that rolls back tx itself (then begins again, or not): failed, nothing of it committed; the retry is processed once', async () => {
    const { file, app } = shop();
    const ledger = new SqlLedger(fromSqlite(file));
    await ledger.ensureSchema();
    const endings = [
      (tx: DatabaseSync) => tx.exec('ROLLBACK; BEGIN'),
      (tx: DatabaseSync) => tx.prepare('ROLLBACK').run(),
      (tx: DatabaseSync) => tx.exec('ROLLBACK'),
    ];
    for (const [i, ending] of endings.entries()) {
      const run = await ledger.run(
        `k${i}`,
        (tx) => {
          tx.prepare("INSERT INTO orders VALUES ('o')").run();
          ending(tx);
          tx.prepare("INSERT INTO orders VALUES ('after')").run();
        },
        once,
      );
      expect(run).toMatchObject({
        outcome: 'failed',
        error: expect.objectContaining({ message: expect.stringMatching(/no longer open when the work returned/) }),
      });
    }
    // What the work wrote before its ROLLBACK never committed (after it, outside the run, it did).
    const fulfilled = () => app.prepare("SELECT count(*) AS n FROM orders WHERE id = 'o'").get()?.n;
    expect(fulfilled()).toBe(0);
    expect(
      (await ledger.run('k0', (tx) => void tx.prepare("INSERT INTO orders VALUES ('o')").run(), once)).outcome,
    ).toBe('processed');
    expect(fulfilled()).toBe(1);
    app.close();
  });

  it('maxRunMs caps every run, whatever it asks: a run past it is timed_out; an invalid one is refused', async () => {
    const { file } = shop();
    const ledger = new SqlLedger(fromSqlite(file, { maxRunMs: 30 }));
    await ledger.ensureSchema();
    let finish!: () => void;
    const stuck = await ledger.run('k', () => new Promise<void>((resolve) => (finish = resolve)), {
      ...once,
      timeoutMs: 60_000,
    });
    finish();
    expect(stuck).toEqual({ outcome: 'timed_out' });
    expect(() => fromSqlite(file, { maxRunMs: 0 })).toThrow(/maxRunMs must be a whole number of milliseconds/);
  });
});
