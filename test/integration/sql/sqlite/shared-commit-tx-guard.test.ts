/**
 * The SQLite shared COMMIT and the tx guard: what tx refuses because it would outlast the run
 * (a tag store kept past it would write into a later run's transaction), and how often a handler
 * runs when a joined run that may have ended the transaction fails.
 */
import { describe, expect, it } from 'vitest';
import { ConfigurationError } from '../../../../src/index.js';
import { fulfil, once, sqliteShop, stopTheRunClock } from '../../../helpers/sqlite-shop.js';

describe("what tx refuses because it would outlast the run on the ledger's connection", () => {
  it('a tag store (createTagStore, Node 24) and the other methods bound to the connection: a ConfigurationError, nothing done; the run and the runs after it commit', async () => {
    const { app, ledger, written } = await sqliteShop();
    const refused: unknown[] = [];
    // Those this runtime's DatabaseSync has (createTagStore and setAuthorizer are Node 24's).
    const methods = [
      'createTagStore',
      'function',
      'aggregate',
      'setAuthorizer',
      'loadExtension',
      'createSession',
    ].filter((method) => typeof (app as unknown as Record<string, unknown>)[method] === 'function');
    const a = await ledger.run(
      'PAY_1',
      (tx) => {
        const connection = tx as unknown as Record<string, (...args: unknown[]) => unknown>;
        for (const method of methods) {
          try {
            connection[method]?.('x', () => undefined);
          } catch (error) {
            refused.push(error);
          }
        }
        fulfil(tx, 'PAY_1');
      },
      once,
    );
    const later = await Promise.all(
      ['PAY_2', 'PAY_3', 'PAY_4'].map((key) => ledger.run(key, (tx) => fulfil(tx, key), once)),
    );
    expect(methods.length).toBeGreaterThanOrEqual(4);
    expect(refused).toHaveLength(methods.length);
    for (const error of refused) {
      expect(error).toBeInstanceOf(ConfigurationError);
      expect(error).toMatchObject({ message: expect.stringMatching(/would outlast the run/) });
    }
    expect({
      a: a.outcome,
      later: later.map((run) => run.outcome),
      rows: ['PAY_1', 'PAY_2', 'PAY_3', 'PAY_4'].map(written),
    }).toEqual({
      a: 'processed',
      later: ['processed', 'processed', 'processed'],
      rows: [1, 1, 1, 1],
    });
    app.close();
  });
});

describe('a joined run that used tx.exec and then threw', () => {
  it('re-runs each run before it once (not more), and every processed run is committed once', async () => {
    const { app, ledger, written } = await sqliteShop();
    stopTheRunClock(); // A, B and C share one transaction, however busy the machine.
    const calls = new Map<string, number>();
    const count = (key: string) => calls.set(key, (calls.get(key) ?? 0) + 1);
    const plain = (key: string) =>
      ledger.run(
        key,
        (tx) => {
          count(key);
          fulfil(tx, key);
        },
        once,
      );
    const a = plain('PAY_A');
    const b = plain('PAY_B');
    const c = ledger.run(
      'PAY_C',
      (tx) => {
        count('PAY_C');
        tx.exec('UPDATE stock SET n = n + 1');
        throw new Error('C refuses the order');
      },
      once,
    );
    const [ra, rb, rc] = await Promise.all([a, b, c]);
    expect({
      outcomes: [ra.outcome, rb.outcome, rc.outcome],
      calls: Object.fromEntries(calls),
      rows: [written('PAY_A'), written('PAY_B')],
    }).toEqual({
      outcomes: ['processed', 'processed', 'failed'],
      // The cost of the fix: A's and B's handlers ran twice for one delivery each.
      calls: { PAY_A: 2, PAY_B: 2, PAY_C: 1 },
      rows: [1, 1],
    });
    app.close();
  });

  it('under load (every 5th handler uses exec and throws): no handler runs more than twice per delivery, no hang, processed means committed', async () => {
    const { app, ledger, written } = await sqliteShop();
    const calls = new Map<string, number>();
    const deliveries = Array.from({ length: 300 }, (_, i) => `PAY_${i}`);
    const runs = deliveries.map((key, i) =>
      ledger.run(
        key,
        (tx) => {
          calls.set(key, (calls.get(key) ?? 0) + 1);
          if (i % 5 === 4) {
            tx.exec('UPDATE stock SET n = n + 1');
            throw new Error('refused');
          }
          fulfil(tx, key);
        },
        once,
      ),
    );
    const outcomes = await Promise.all(runs);
    const wrong = outcomes.flatMap((run, i) => {
      const key = deliveries[i] as string;
      const ok =
        i % 5 === 4
          ? run.outcome === 'failed' && written(key) === 0
          : run.outcome === 'processed' && written(key) === 1;
      return ok ? [] : [`${key}: ${run.outcome} rows ${written(key)}`];
    });
    expect(wrong).toEqual([]);
    expect(Math.max(...calls.values())).toBeLessThanOrEqual(2);
    app.close();
  });
});
