/**
 * The SQLite shared COMMIT at its edges: transactions that are not ledger runs and what pauses
 * sharing, a handler that misuses `tx` (a statement left half-read, the transaction ended with a
 * savepoint of the ledger's name left behind), and the webhook handler over concurrent deliveries.
 */
import { DatabaseSync } from 'node:sqlite';
import { describe, expect, it } from 'vitest';
import { type SqlLedger, SqlPayouts } from '../../../../src/sql/index.js';
import { createWebhookHandler, signCallback } from '../../../../src/webhooks/index.js';
import { breakForeignKey, fulfil, once, sleep, sqliteShop, stopTheRunClock } from '../../../helpers/sqlite-shop.js';

const keys = Array.from({ length: 40 }, (_, i) => `order-${i}`);

/** How many distinct COMMITs answered `keys` run at once (one per run: no sharing). */
async function commitMoments(ledger: SqlLedger<DatabaseSync>, all: () => number, prefix: string) {
  const seen: number[] = [];
  await Promise.all(
    keys.map(async (key) => {
      const run = await ledger.run(`${prefix}${key}`, (tx) => fulfil(tx, `${prefix}${key}`), once);
      expect(run.outcome).toBe('processed');
      seen.push(all());
    }),
  );
  return new Set(seen).size;
}

/** Spins `ms` without awaiting: a handler that computes (an invoice PDF) or a process descheduled. */
function compute(ms: number): void {
  const until = performance.now() + ms;
  while (performance.now() < until) {
    // the CPU is the handler's
  }
}

/** What a handler does past SLOW_RUN_MS, by the way it spends the time. */
const holds: [string, (app: DatabaseSync, id: string) => Promise<void> | void][] = [
  ['awaits (a call to its own stock service)', () => sleep(30)],
  ['computes (an invoice rendered synchronously)', () => compute(30)],
  [
    "waits synchronously (a write through the app's own DatabaseSync, which the ledger's connection locks, with a timeout)",
    (app, id) => {
      const file = String((app.prepare('PRAGMA database_list').get() as { file: string }).file);
      const own = new DatabaseSync(file, { timeout: 30 });
      try {
        own.prepare('INSERT INTO orders (id) VALUES (?)').run(`${id}-app`);
      } catch {
        // database is locked: the misuse docs/ledger.md warns about
      } finally {
        own.close();
      }
    },
  ],
];

describe('what pauses sharing', () => {
  it('baseline: 40 fast runs at once share COMMITs', async () => {
    const { app, ledger, all } = await sqliteShop();
    stopTheRunClock(); // nothing pauses sharing but the runs, however busy the machine
    expect(await commitMoments(ledger, all, 'a-')).toBeLessThan(keys.length / 2);
    app.close();
  });

  it.each(holds)(
    'a handler that holds the connection past SLOW_RUN_MS while the run before it waits on their COMMIT, however (%s), costs that run its time once: runs then commit alone for a while',
    async (_how, hold) => {
      const { app, ledger, all } = await sqliteShop({ maxRunMs: 300 });
      // Five pairs in a row: A, then B let in while A waits for the COMMIT they share.
      let waited = 0;
      for (let i = 0; i < 5; i++) {
        let bEnded = false;
        const a = ledger
          .run(`A${i}`, (tx) => fulfil(tx, `A${i}`), once)
          .then((run) => {
            if (bEnded) waited++; // A answered only after B's handler ended
            return run;
          });
        const b = ledger.run(
          `B${i}`,
          async (tx) => {
            await hold(app, `B${i}`);
            fulfil(tx, `B${i}`);
            bEnded = true;
          },
          once,
        );
        expect([(await a).outcome, (await b).outcome]).toEqual(['processed', 'processed']);
      }
      // Alone, A is answered before B begins; shared, after B ends: that happens once, not per pair.
      expect(waited).toBe(1);
      stopTheRunClock(); // the pause stays on however long the burst takes
      expect(await commitMoments(ledger, all, 'c-')).toBe(keys.length);
      app.close();
    },
  );

  it('the first run of a transaction holding the connection long pauses nothing: no answer waited on it', async () => {
    const { app, ledger, all } = await sqliteShop();
    const first = await ledger.run(
      'computes',
      (tx) => {
        compute(30);
        fulfil(tx, 'computes');
      },
      once,
    );
    expect(first.outcome).toBe('processed');
    stopTheRunClock(); // a pause, had it begun, would still be on
    expect(await commitMoments(ledger, all, 'd-')).toBeLessThan(keys.length / 2);
    app.close();
  });

  it("a slow transaction that is not a ledger run (payouts.transaction, a worker's, prune) never joins a shared COMMIT, so it does not pause sharing", async () => {
    const { app, client, ledger, all } = await sqliteShop();
    const payouts = new SqlPayouts(client, { onRefused: () => undefined, onSettled: () => undefined });
    await payouts.ensureSchema();
    // Nothing waits on it beside a group: begin() commits any open shared transaction first.
    await payouts.transaction(async () => {
      await sleep(20);
    });
    stopTheRunClock(); // a pause, had it begun, would still be on
    expect(await commitMoments(ledger, all, 'b-')).toBeLessThan(keys.length / 2);
    app.close();
  });
});

describe('a write statement the handler leaves half-read through tx', () => {
  it('is ended with its run: the run commits (the statement wrote both rows), and the runs after it commit', async () => {
    const { app, ledger, written } = await sqliteShop();
    const kept: unknown[] = [];
    const first = await ledger.run(
      'half-read',
      (tx) => {
        // e.g. the id of the first row an INSERT … RETURNING wrote, read off its iterator.
        const rows = tx.prepare("INSERT INTO orders (id) VALUES ('half-read'), ('half-read-2') RETURNING id").iterate();
        kept.push(rows, rows.next().value);
      },
      once,
    );
    const after = await Promise.all(keys.slice(0, 5).map((key) => ledger.run(key, (tx) => fulfil(tx, key), once)));
    expect({
      first: first.outcome,
      rows: [written('half-read'), written('half-read-2')],
      after: after.map((run) => run.outcome),
      written: keys.slice(0, 5).map(written),
    }).toEqual({
      first: 'processed',
      rows: [1, 1],
      after: keys.slice(0, 5).map(() => 'processed'),
      written: keys.slice(0, 5).map(() => 1),
    });
    // Kept past its run, the iterator runs nothing more on the connection.
    const [rows] = kept as [Iterator<unknown>];
    expect(rows.next().done).toBe(true);
    app.close();
  });
});

describe("a joined run's rollback after its work may have ended the transaction trusts no savepoint", () => {
  it("a handler that ends tx and leaves a savepoint of the ledger's name, then throws: the run before it is not answered 'processed' with nothing committed", async () => {
    const { app, ledger, written } = await sqliteShop();
    const a = ledger.run('PAY_1', (tx) => fulfil(tx, 'PAY_1'), once);
    const b = ledger.run(
      'PAY_2',
      (tx) => {
        fulfil(tx, 'PAY_2');
        // Misuse (the ledger's savepoint name is internal): ROLLBACK takes the run before with it.
        tx.exec('ROLLBACK; BEGIN; SAVEPOINT myr_ledger_run');
        throw new Error('handler failed');
      },
      once,
    );
    const [ra, rb] = await Promise.all([a, b]);
    expect(rb.outcome).toBe('failed');
    // The run before it lost its part with the work's ROLLBACK, so it ran again and committed.
    expect({ a: ra.outcome, written: written('PAY_1'), b: written('PAY_2') }).toEqual({
      a: 'processed',
      written: 1,
      b: 0,
    });
    app.close();
  });
});

describe('transactions beside the runs, and the webhook handler', () => {
  it('a leader is not held by a non-ledger transaction queued after it (payouts.transaction whose body never settles): its begin commits the group first', async () => {
    const { app, client, ledger, written } = await sqliteShop({ maxRunMs: 300 });
    const payouts = new SqlPayouts(client, { onRefused: () => undefined, onSettled: () => undefined });
    await payouts.ensureSchema();
    const a = ledger.run('PAY_1', (tx) => fulfil(tx, 'PAY_1'), once);
    void payouts.transaction(() => new Promise(() => undefined)).catch(() => undefined);
    const ra = await a;
    expect(ra.outcome).toBe('processed');
    expect(written('PAY_1')).toBe(1);
    app.close();
  });

  it("a redelivery refused off a run beside it waits at most that group's last run (maxRunMs), then is answered duplicate with the record committed", async () => {
    const { app, ledger, written } = await sqliteShop({ maxRunMs: 300 });
    const a = ledger.run('PAY_1', (tx) => fulfil(tx, 'PAY_1'), once);
    let committedAtAnswer = -1;
    const b = ledger
      .run('PAY_1', (tx) => fulfil(tx, 'PAY_1-twice'), once)
      .then((run) => {
        committedAtAnswer = written('PAY_1');
        return run;
      });
    const c = ledger.run('PAY_2', () => new Promise(() => undefined), once);
    const [ra, rb, rc] = await Promise.all([a, b, c]);
    expect([ra.outcome, rb.outcome, rc.outcome]).toEqual(['processed', 'duplicate', 'timed_out']);
    expect(committedAtAnswer).toBe(1);
    app.close();
  });

  it('createWebhookHandler on fromSqlite: concurrent deliveries (each sent 3 times) answer 200 only with their write committed, and write once', async () => {
    const API_KEY = 'sk_test_review2_shared_commit_01';
    const { app, ledger, written } = await sqliteShop({ maxRunMs: 300 });
    const handler = createWebhookHandler({
      verifier: { apiKey: API_KEY },
      store: ledger,
      onEvent: async (event, { tx }) => {
        const id = event.signed.payment_id;
        if (id.endsWith('7')) await new Promise((resolve) => setImmediate(resolve));
        fulfil(tx, id);
        if (id === 'PAY_13') breakForeignKey(tx, id);
      },
    });
    const requests = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        signCallback(API_KEY, { payment_id: `PAY_${i}`, reference_id: `ORDER_${i}`, amount: 10, status: 'SUCCESS' }),
      ),
    );
    const problems: string[] = [];
    await Promise.all(
      [0, 1, 2].flatMap(() =>
        requests.map(async ({ rawBody, headers }, i) => {
          const answer = await handler.handle({ body: rawBody, headers });
          const now = written(`PAY_${i}`);
          if (answer.status === 200 && now !== 1) problems.push(`PAY_${i} 200 ${answer.body.outcome} written ${now}`);
          if (now > 1) problems.push(`PAY_${i} written ${now}`);
          if (i === 13 && answer.status === 200) problems.push('PAY_13 answered 200');
        }),
      ),
    );
    expect(problems).toEqual([]);
    app.close();
  });
});
