/**
 * postgres.js's `tx` (src/sql/adapters/postgres-js/postgres-js-tx.ts): whether what the work sent
 * through it may have ended the ledger's transaction, so that COMMIT goes with the ledger's check.
 * Only plain reads and writes with plain values, settled by the time the work returned, skip it;
 * what the check then catches on real Postgres is in test/integration/sql/pg/work-ends-tx.test.ts.
 */
import { describe, expect, it } from 'vitest';
import { guardedTx } from '../../../../../src/sql/adapters/postgres-js/postgres-js-tx.js';

/** A postgres.js query as the adapter meets it: a Promise with its parts, run by calling its handler. */
function query(strings: readonly string[], args: readonly unknown[]) {
  let resolve!: (rows: unknown) => void;
  let reject!: (error: unknown) => void;
  const pending = new Promise((done, fail) => ((resolve = done), (reject = fail)));
  pending.catch(() => undefined);
  const made = Object.assign(pending, { strings, args, reject, handler: (_: unknown) => undefined });
  return {
    made,
    /** Runs it as postgres.js does once it is awaited, and answers it (or fails it). */
    run: async (fails = false) => {
      made.handler(made);
      if (fails) reject(Object.assign(new Error('duplicate key'), { code: '23505' }));
      else resolve([]);
      await pending.catch(() => undefined);
    },
  };
}

/** A reserved connection whose queries are made by the tagged template and `unsafe`, as postgres.js's are. */
function reserved() {
  const made: ReturnType<typeof query>[] = [];
  const make = (strings: readonly string[], args: readonly unknown[]) => {
    const next = query(strings, args);
    made.push(next);
    return next.made;
  };
  const connection = Object.assign((strings: TemplateStringsArray, ...args: unknown[]) => make([...strings], args), {
    unsafe: (text: string, args: unknown[] = []) => make([text], args),
    begin: () => undefined,
    release: () => undefined,
  });
  return { connection, last: () => made.at(-1) as ReturnType<typeof query> };
}

const open = () => undefined;

describe("postgres.js tx: whether COMMIT checks that the transaction is still the ledger's", () => {
  it('no statement, or only plain reads and writes with plain values that settled: no check (failed ones too: COMMIT answers ROLLBACK)', async () => {
    const db = reserved();
    const work = guardedTx(db.connection, open);
    expect(work.mayHaveEnded()).toBe(false);
    void work.tx`UPDATE orders SET paid = ${true}, at = ${new Date(0)} WHERE id = ${'A'} AND n = ${7}`;
    await db.last().run();
    void work.tx.unsafe('INSERT INTO fulfilments (order_id) VALUES ($1)', ['A']);
    await db.last().run(true);
    void work.tx.unsafe('SELECT paid FROM orders WHERE id = $1', [null]);
    await db.last().run();
    expect(work.mayHaveEnded()).toBe(false);
  });

  it('a statement still running when the work returned: checked, until it settles', async () => {
    const db = reserved();
    const work = guardedTx(db.connection, open);
    void work.tx`UPDATE orders SET paid = true WHERE id = ${'A'}`;
    const running = db.last();
    running.made.handler(running.made);
    expect(work.mayHaveEnded()).toBe(true);
    await running.run();
    expect(work.mayHaveEnded()).toBe(false);
  });

  it.each([
    ['COMMIT', () => ['COMMIT'], []],
    ['ROLLBACK; BEGIN', () => ['ROLLBACK; BEGIN'], []],
    ['a write then COMMIT in one simple query', () => ['UPDATE orders SET paid = true; COMMIT'], []],
    ['SAVEPOINT', () => ['SAVEPOINT s'], []],
    ['a fragment among the values', () => ['UPDATE orders SET ', ' WHERE id = 1'], [query(['paid = true'], []).made]],
    [
      'an array among the values (a helper may expand it)',
      () => ['SELECT * FROM orders WHERE id IN ', ''],
      [['A', 'B']],
    ],
  ] as const)('%s: checked', async (_, strings, args) => {
    const db = reserved();
    const work = guardedTx(db.connection, open);
    void Reflect.apply(work.tx, undefined, [Object.assign(strings(), { raw: strings() }), ...args]);
    await db.last().run();
    expect(work.mayHaveEnded()).toBe(true);
  });

  it('any other method of the connection (begin, release, …): checked', () => {
    for (const method of ['begin', 'release'] as const) {
      const work = guardedTx(reserved().connection, open);
      expect(typeof work.tx[method]).toBe('function');
      expect(work.mayHaveEnded()).toBe(true);
    }
  });

  it('a query refused once the run ended is rejected, never run, and changes nothing', async () => {
    const db = reserved();
    const refusal = new Error('the run has ended');
    const work = guardedTx(db.connection, () => refusal);
    const made = work.tx.unsafe('COMMIT');
    db.last().made.handler(db.last().made);
    await expect(made).rejects.toBe(refusal);
    expect(work.mayHaveEnded()).toBe(false);
  });
});
