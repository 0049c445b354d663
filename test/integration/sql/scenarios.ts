/**
 * The ledger's scenarios, written once and run on every client against a real database
 * (ledger-postgres, ledger-mariadb, ledger-sqlite): what a merchant depends on is that the
 * merchant's own write through `tx` happens exactly once per callback, whatever the handler,
 * the clock or the database does.
 */
import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { SqlLedger, type SqlClient, type SqlLedgerOptions } from '../../../src/sql/index.js';
import { canSupersede, lifecycleRank } from '../../../src/webhooks/lifecycle.js';
import { atMs } from '../../helpers/same-ms.js';

export interface LedgerFixture<Tx> {
  /** The merchant's client, wrapped by its adapter. */
  readonly client: SqlClient<Tx>;
  /** The merchant's fulfilment: inserts one row for `payment` in its `fulfilments` table, through `tx`. */
  fulfil(tx: Tx, payment: string): Promise<void>;
  /** How many fulfilment rows `payment` has, read on another connection (committed rows only). */
  fulfilments(payment: string): Promise<number>;
  /** Stops and restarts the database, when the fixture can. */
  readonly outage?: { stop(): Promise<void>; start(): Promise<void> } | undefined;
  /** Whether an abandoned transaction is rolled back at once (rolled back, or its connection closed) rather than when the work settles: every adapter but SQLite. */
  readonly closesOnTimeout: boolean;
}

const DAY = 86_400_000;

/** The scenario every client runs (the ORMs too): a handled payment's resend at any age. */
export const HANDLED_FOR_GOOD =
  "a payment's callback is handled for good: 25 h later, its records pruned, a resent SUCCESS and REFUNDED are duplicates, a stale SUCCESS superseded";
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * The run options the webhook handler gives a payment callback of `status` (claim-and-run.ts):
 * its place in the payment's life, and whether it raises the payment's mark.
 */
const asCallback = (payment: string, status: string, completedTtlMs = DAY) => ({
  raiseMark: canSupersede(status),
  completedTtlMs,
  order: { paymentId: payment, rank: lifecycleRank(status) },
});

/** A gate a test opens by hand: the work waits on it while the test does something else. */
function gate() {
  let open!: () => void;
  const opened = new Promise<void>((resolve) => (open = resolve));
  return { open, opened };
}

/**
 * Whether a payment outcome's run on `client` claims in its payment's row alone, with no row of its
 * own: on Postgres, through a client that checks its transaction in COMMIT (node-postgres, postgres.js).
 */
export const claimsInPaymentRow = (client: SqlClient<unknown>): boolean =>
  client.dialect === 'postgres' && client.commitChecked === true;

/** One table per ledger, so the scenarios do not see each other's keys. */
export async function newLedger<Tx>(
  client: SqlClient<Tx> | LedgerFixture<Tx>,
  options: SqlLedgerOptions = {},
): Promise<SqlLedger<Tx>> {
  const ledger = new SqlLedger('client' in client ? client.client : client, {
    table: `ledger_${randomUUID().replaceAll('-', '').slice(0, 12)}`,
    ...options,
  });
  await ledger.ensureSchema();
  return ledger;
}

/** `only`: the titles to run (Kysely and Drizzle run the first ones); `outage`: whether the fixture can stop its database. */
export function ledgerScenarios<Tx>(
  name: string,
  setup: () => LedgerFixture<Tx>,
  { only, outage = false }: { only?: readonly string[]; outage?: boolean } = {},
): void {
  const scenario = (title: string, body: () => Promise<void>, timeout?: number) => {
    if (only === undefined || only.includes(title)) it(title, body, timeout);
  };

  describe(`the ledger on ${name}`, () => {
    scenario('a callback is processed once; its duplicate finds the record and does not run', async () => {
      const fixture = setup();
      const ledger = await newLedger(fixture);
      const payment = `PAY_${randomUUID()}`;
      const options = asCallback(payment, 'SUCCESS');
      const first = await ledger.run(
        `payment:${payment}:SUCCESS`,
        async (tx) => (await fixture.fulfil(tx, payment), 'fulfilled'),
        options,
      );
      let ran = false;
      const second = await ledger.run(`payment:${payment}:SUCCESS`, () => void (ran = true), options);
      expect(first).toEqual({ outcome: 'processed', value: 'fulfilled' });
      expect(second).toEqual({ outcome: 'duplicate' });
      expect(ran).toBe(false);
      expect(await fixture.fulfilments(payment)).toBe(1);
    });

    scenario('a handler that throws is rolled back with its writes, and the retry fulfils once', async () => {
      const fixture = setup();
      const ledger = await newLedger(fixture);
      const payment = `PAY_${randomUUID()}`;
      const failure = new Error('the shipping service is down');
      const thrown = await ledger.run(
        `payment:${payment}:SUCCESS`,
        async (tx) => {
          await fixture.fulfil(tx, payment);
          throw failure;
        },
        { raiseMark: false, completedTtlMs: DAY },
      );
      expect(thrown).toEqual({ outcome: 'failed', error: failure });
      expect(await fixture.fulfilments(payment)).toBe(0);
      const retry = await ledger.run(`payment:${payment}:SUCCESS`, (tx) => fixture.fulfil(tx, payment), {
        raiseMark: false,
        completedTtlMs: DAY,
      });
      expect(retry.outcome).toBe('processed');
      expect(await fixture.fulfilments(payment)).toBe(1);
    });

    scenario('a handler that outlives its time is answered timed_out and none of its writes commit', async () => {
      const fixture = setup();
      const ledger = await newLedger(fixture);
      const payment = `PAY_${randomUUID()}`;
      const late = gate();
      const settled = gate();
      const run = await ledger.run(
        `payment:${payment}:SUCCESS`,
        async (tx) => {
          await fixture.fulfil(tx, payment);
          await late.opened;
          settled.open();
        },
        { raiseMark: false, completedTtlMs: DAY, timeoutMs: 100 },
      );
      expect(run).toEqual({ outcome: 'timed_out' });
      late.open();
      await settled.opened;
      await sleep(50); // the rollback of an adapter that waits for the work
      expect(await fixture.fulfilments(payment)).toBe(0);
      const retry = await ledger.run(`payment:${payment}:SUCCESS`, (tx) => fixture.fulfil(tx, payment), {
        raiseMark: false,
        completedTtlMs: DAY,
      });
      expect(retry.outcome).toBe('processed');
      expect(await fixture.fulfilments(payment)).toBe(1);
    });

    scenario('REFUNDED then SUCCESS: the SUCCESS is superseded and does not run', async () => {
      const fixture = setup();
      const ledger = await newLedger(fixture);
      const payment = `PAY_${randomUUID()}`;
      const refunded = await ledger.run(
        `payment:${payment}:REFUNDED`,
        () => 'refund recorded',
        asCallback(payment, 'REFUNDED'),
      );
      let ran = false;
      const success = await ledger.run(
        `payment:${payment}:SUCCESS`,
        () => void (ran = true),
        asCallback(payment, 'SUCCESS'),
      );
      expect(refunded.outcome).toBe('processed');
      expect(success).toEqual({ outcome: 'superseded' });
      expect(ran).toBe(false);
    });

    // A payment's ordered callbacks are claimed one at a time, on the lock of its mark's row: a
    // SUCCESS delivered while the REFUNDED still runs must not run beside it and commit after it.
    scenario(
      'a SUCCESS delivered while its REFUNDED is in flight waits for it, then is superseded and does not run',
      async () => {
        const fixture = setup();
        const ledger = await newLedger(fixture);
        const payment = `PAY_${randomUUID()}`;
        const hold = gate();
        const started = gate();
        const refunded = ledger.run(
          `payment:${payment}:REFUNDED`,
          async () => {
            started.open();
            await hold.opened;
            return 'refund recorded';
          },
          asCallback(payment, 'REFUNDED'),
        );
        await started.opened;
        let ran = false;
        const success = ledger.run(
          `payment:${payment}:SUCCESS`,
          async (tx) => {
            ran = true;
            await fixture.fulfil(tx, payment);
          },
          asCallback(payment, 'SUCCESS'),
        );
        await sleep(100); // the SUCCESS reaches its claim while the REFUNDED holds its transaction
        hold.open();
        expect(await refunded).toEqual({ outcome: 'processed', value: 'refund recorded' });
        expect(await success).toEqual({ outcome: 'superseded' });
        expect(ran).toBe(false);
        expect(await fixture.fulfilments(payment)).toBe(0);
      },
    );

    scenario(
      'a SUCCESS while its REFUNDED holds past lockTimeoutMs is in_flight and does not run; its retry is superseded',
      async () => {
        const fixture = setup();
        const ledger = await newLedger(fixture, { lockTimeoutMs: 300 });
        const payment = `PAY_${randomUUID()}`;
        const hold = gate();
        const started = gate();
        const refunded = ledger.run(
          `payment:${payment}:REFUNDED`,
          async () => {
            started.open();
            await hold.opened;
          },
          asCallback(payment, 'REFUNDED'),
        );
        await started.opened;
        let ran = false;
        const success = asCallback(payment, 'SUCCESS');
        const during = await ledger.run(`payment:${payment}:SUCCESS`, () => void (ran = true), success);
        hold.open();
        expect(during).toEqual({ outcome: 'in_flight' });
        expect((await refunded).outcome).toBe('processed');
        expect(await ledger.run(`payment:${payment}:SUCCESS`, () => void (ran = true), success)).toEqual({
          outcome: 'superseded',
        });
        expect(ran).toBe(false);
      },
    );

    scenario('a REFUNDED delivered while its SUCCESS is in flight runs only after the SUCCESS committed', async () => {
      const fixture = setup();
      const ledger = await newLedger(fixture);
      const payment = `PAY_${randomUUID()}`;
      const hold = gate();
      const started = gate();
      const events: string[] = [];
      const success = ledger.run(
        `payment:${payment}:SUCCESS`,
        async (tx) => {
          await fixture.fulfil(tx, payment);
          started.open();
          await hold.opened;
          events.push('SUCCESS done');
        },
        asCallback(payment, 'SUCCESS'),
      );
      await started.opened;
      const refunded = ledger.run(
        `payment:${payment}:REFUNDED`,
        () => void events.push('REFUNDED started'),
        asCallback(payment, 'REFUNDED'),
      );
      await sleep(100);
      hold.open();
      expect((await success).outcome).toBe('processed');
      expect((await refunded).outcome).toBe('processed');
      expect(events).toEqual(['SUCCESS done', 'REFUNDED started']);
      expect(await fixture.fulfilments(payment)).toBe(1);
    });

    scenario(
      'a duplicate while the first still runs waits lockTimeoutMs, then is in_flight and does not run',
      async () => {
        const fixture = setup();
        const ledger = await newLedger(fixture, { lockTimeoutMs: 300 });
        const payment = `PAY_${randomUUID()}`;
        const hold = gate();
        const started = gate();
        const first = ledger.run(
          `payment:${payment}:SUCCESS`,
          async (tx) => {
            await fixture.fulfil(tx, payment);
            started.open();
            await hold.opened;
          },
          { raiseMark: false, completedTtlMs: DAY },
        );
        await started.opened;
        let ran = false;
        const duplicate = await ledger.run(`payment:${payment}:SUCCESS`, () => void (ran = true), {
          raiseMark: false,
          completedTtlMs: DAY,
        });
        hold.open();
        expect(duplicate).toEqual({ outcome: 'in_flight' });
        expect(ran).toBe(false);
        expect((await first).outcome).toBe('processed');
        expect(
          await ledger.run(`payment:${payment}:SUCCESS`, () => void (ran = true), {
            raiseMark: false,
            completedTtlMs: DAY,
          }),
        ).toEqual({ outcome: 'duplicate' });
        expect(await fixture.fulfilments(payment)).toBe(1);
      },
    );

    scenario('many deliveries of one callback at once: exactly one fulfilment', async () => {
      const fixture = setup();
      const ledger = await newLedger(fixture);
      const payment = `PAY_${randomUUID()}`;
      const runs = await Promise.all(
        Array.from({ length: 8 }, () =>
          ledger.run(`payment:${payment}:SUCCESS`, (tx) => fixture.fulfil(tx, payment), {
            raiseMark: false,
            completedTtlMs: DAY,
          }),
        ),
      );
      expect(runs.filter((run) => run.outcome === 'processed')).toHaveLength(1);
      expect(runs.every((run) => ['processed', 'duplicate', 'in_flight'].includes(run.outcome))).toBe(true);
      expect(await fixture.fulfilments(payment)).toBe(1);
    });

    scenario(
      "many deliveries of one payment's callback at once, as the handler runs them (with its order): exactly one fulfilment",
      async () => {
        const fixture = setup();
        const ledger = await newLedger(fixture);
        const payment = `PAY_${randomUUID()}`;
        const runs = await Promise.all(
          Array.from({ length: 8 }, () =>
            ledger.run(
              `payment:${payment}:SUCCESS`,
              (tx) => fixture.fulfil(tx, payment),
              asCallback(payment, 'SUCCESS'),
            ),
          ),
        );
        expect(runs.filter((run) => run.outcome === 'processed')).toHaveLength(1);
        expect(runs.every((run) => ['processed', 'duplicate', 'in_flight'].includes(run.outcome))).toBe(true);
        expect(await fixture.fulfilments(payment)).toBe(1);
        expect(
          await ledger.run(
            `payment:${payment}:SUCCESS`,
            (tx) => fixture.fulfil(tx, payment),
            asCallback(payment, 'SUCCESS'),
          ),
        ).toEqual({ outcome: 'duplicate' });
      },
    );

    scenario('two outcomes of one rank (FAILED, then SUCCESS) both run: neither supersedes the other', async () => {
      const fixture = setup();
      const ledger = await newLedger(fixture);
      const payment = `PAY_${randomUUID()}`;
      const failed = await ledger.run(`payment:${payment}:FAILED`, () => 'failed', asCallback(payment, 'FAILED'));
      const success = await ledger.run(
        `payment:${payment}:SUCCESS`,
        (tx) => fixture.fulfil(tx, payment),
        asCallback(payment, 'SUCCESS'),
      );
      expect([failed.outcome, success.outcome]).toEqual(['processed', 'processed']);
      expect(await fixture.fulfilments(payment)).toBe(1);
    });

    scenario(HANDLED_FOR_GOOD, async () => {
      const fixture = setup();
      const ledger = await newLedger(fixture);
      const paid = `PAY_${randomUUID()}`;
      const refunded = `PAY_${randomUUID()}`;
      const fulfil = (payment: string) => (tx: Tx) => fixture.fulfil(tx, payment);
      const started = Date.now();
      expect((await ledger.run(`payment:${paid}:SUCCESS`, fulfil(paid), asCallback(paid, 'SUCCESS'))).outcome).toBe(
        'processed',
      );
      expect(
        (await ledger.run(`payment:${refunded}:SUCCESS`, fulfil(refunded), asCallback(refunded, 'SUCCESS'))).outcome,
      ).toBe('processed');
      expect(
        (
          await ledger.run(
            `payment:${refunded}:REFUNDED`,
            fulfil(`${refunded}:refund`),
            asCallback(refunded, 'REFUNDED'),
          )
        ).outcome,
      ).toBe('processed');
      // A day and an hour later: each callback's own record has expired, and the daily prune took it
      // (node-postgres and postgres.js keep none: a payment outcome's run claims in the payment's row alone).
      const later = started + DAY + 3_600_000;
      expect(await atMs(later, () => ledger.prune())).toBe(claimsInPaymentRow(fixture.client) ? 0 : 3);
      const resend = (payment: string, status: string, work: (tx: Tx) => Promise<void>) =>
        atMs(later, () => ledger.run(`payment:${payment}:${status}`, work, asCallback(payment, status)));
      expect(await resend(paid, 'SUCCESS', fulfil(paid))).toEqual({ outcome: 'duplicate' });
      expect(await resend(refunded, 'REFUNDED', fulfil(`${refunded}:refund`))).toEqual({ outcome: 'duplicate' });
      expect(await resend(refunded, 'SUCCESS', fulfil(refunded))).toEqual({ outcome: 'superseded' });
      expect([
        await fixture.fulfilments(paid),
        await fixture.fulfilments(refunded),
        await fixture.fulfilments(`${refunded}:refund`),
      ]).toEqual([1, 1, 1]);
      // What stops them is one row per payment, which no prune takes.
      expect(await atMs(later + 365 * DAY, () => ledger.prune())).toBe(0);
    });

    scenario(
      "runs keyed by their delivery (idempotency: 'webhook') are kept only as long as their records: two REFUNDED deliveries of one payment both run",
      async () => {
        const fixture = setup();
        const ledger = await newLedger(fixture);
        const payment = `PAY_${randomUUID()}`;
        const first = await ledger.run(
          `webhook:W1_${payment}`,
          (tx) => fixture.fulfil(tx, payment),
          asCallback(payment, 'REFUNDED'),
        );
        const second = await ledger.run(
          `webhook:W2_${payment}`,
          (tx) => fixture.fulfil(tx, payment),
          asCallback(payment, 'REFUNDED'),
        );
        const again = await ledger.run(
          `webhook:W2_${payment}`,
          (tx) => fixture.fulfil(tx, payment),
          asCallback(payment, 'REFUNDED'),
        );
        expect([first.outcome, second.outcome, again.outcome]).toEqual(['processed', 'processed', 'duplicate']);
        expect(await fixture.fulfilments(payment)).toBe(2);
        // The payment's key, after them: not marked handled by the deliveries, it runs.
        expect(
          (await ledger.run(`payment:${payment}:REFUNDED`, () => undefined, asCallback(payment, 'REFUNDED'))).outcome,
        ).toBe('processed');
      },
    );

    scenario(
      'two outcomes of one rank (FAILED, then SUCCESS) resent after their records expired: both duplicates, neither runs again',
      async () => {
        const fixture = setup();
        const ledger = await newLedger(fixture);
        const payment = `PAY_${randomUUID()}`;
        await ledger.run(`payment:${payment}:SUCCESS`, () => undefined, asCallback(payment, 'SUCCESS', 1));
        await ledger.run(`payment:${payment}:FAILED`, () => undefined, asCallback(payment, 'FAILED', 1));
        await sleep(20);
        let ran = 0;
        const work = () => void (ran += 1);
        const runs = await Promise.all([
          ledger.run(`payment:${payment}:SUCCESS`, work, asCallback(payment, 'SUCCESS')),
          ledger.run(`payment:${payment}:FAILED`, work, asCallback(payment, 'FAILED')),
        ]);
        expect(runs.map((run) => run.outcome)).toEqual(['duplicate', 'duplicate']);
        expect(ran).toBe(0);
      },
    );

    scenario(
      '64 different callbacks at once, as the handler runs them: each processed, none held up by another',
      async () => {
        const fixture = setup();
        const ledger = await newLedger(fixture);
        const payments = Array.from({ length: 64 }, () => `PAY_${randomUUID()}`);
        const runs = await Promise.all(
          payments.map((payment) =>
            ledger.run(
              `payment:${payment}:SUCCESS`,
              (tx) => fixture.fulfil(tx, payment),
              asCallback(payment, 'SUCCESS'),
            ),
          ),
        );
        expect(runs.map((run) => run.outcome)).toEqual(payments.map(() => 'processed'));
      },
    );

    scenario(
      "an expired record is handled again, and prune deletes expired records; a payment's key, even with no order given, is kept for good",
      async () => {
        const fixture = setup();
        const ledger = await newLedger(fixture);
        const payment = `PAY_${randomUUID()}`;
        const brief = { raiseMark: false, completedTtlMs: 1 };
        const run = async (key: string) => (await ledger.run(key, () => undefined, brief)).outcome;
        expect(await run(`reconcile:${payment}`)).toBe('processed');
        expect(await run(`payment:${payment}:SUCCESS`)).toBe('processed');
        await sleep(20);
        expect(await run(`reconcile:${payment}`)).toBe('processed');
        // SqlLedger.run reads the payment from a paymentKey as runOnce does: that outcome's mark is kept for good.
        expect(await run(`payment:${payment}:SUCCESS`)).toBe('duplicate');
        await sleep(20);
        // The reconciliation's row, and (but on node-postgres and postgres.js) the payment key's own row: never the payment's.
        const own = claimsInPaymentRow(fixture.client) ? 1 : 2;
        expect(await ledger.prune({ batchSize: 1 })).toBe(own);
        expect(await ledger.prune()).toBe(0);
        expect(await run(`payment:${payment}:SUCCESS`)).toBe('duplicate');
      },
    );

    if (outage)
      scenario(
        'the database stopped: unavailable, nothing acknowledged; started again: handled once',
        async () => {
          const fixture = setup();
          if (!fixture.outage) throw new Error(`the ${name} fixture has no outage`);
          const ledger = await newLedger(fixture);
          const payment = `PAY_${randomUUID()}`;
          await fixture.outage.stop();
          let ran = false;
          // Started again whatever happens, so that a failure here does not take the next scenarios down too.
          // Each run bounded as the webhook handler bounds it (handlerTimeoutMs): a pool may hold many
          // connections that died with the server, and one may stall (postgres.js, ledger.md).
          const bounded = { raiseMark: false, completedTtlMs: DAY, timeoutMs: 5_000 };
          const down = await ledger
            .run(`payment:${payment}:SUCCESS`, () => void (ran = true), bounded)
            .finally(() => fixture.outage?.start());
          expect(down.outcome).toBe('unavailable');
          expect(ran).toBe(false);
          // The pool's connections died with the server: the first runs after it may still meet one.
          let run;
          for (let attempt = 0; attempt < 8; attempt++) {
            run = await ledger.run(`payment:${payment}:SUCCESS`, (tx) => fixture.fulfil(tx, payment), bounded);
            if (run.outcome !== 'unavailable') break;
          }
          expect(run?.outcome).toBe('processed');
          expect(await fixture.fulfilments(payment)).toBe(1);
        },
        60_000,
      );
  });
}
