/**
 * SqlLedger.run under a payment outcome's key with no `order` is that outcome's, as runOnce's is:
 * a REFUNDED run directly, with the options of run's own TSDoc example (`raiseMark: false`), raises
 * the payment's mark as runOnce's does, so the payment's SUCCESS delivered after it is superseded,
 * never fulfilled after the refund. Real PostgreSQL 15, node-postgres.
 */
import { expect, it } from 'vitest';
import { fromPg } from '../../../../src/sql/index.js';
import { paymentKey, runOnce } from '../../../../src/webhooks/index.js';
import { postgresForFile } from '../../../helpers/database-for-file.js';
import { newLedger } from '../scenarios.js';

const db = postgresForFile(2);

it("a REFUNDED run through SqlLedger.run under its paymentKey supersedes the payment's later SUCCESS, as runOnce's does", async () => {
  const ledger = await newLedger(fromPg(db.pool));
  const outcomes: string[] = [];
  for (const [payment, refund] of [
    ['PAY_RUN_ONCE', () => runOnce(ledger, paymentKey('PAY_RUN_ONCE', 'REFUNDED'), () => undefined)],
    [
      'PAY_DIRECT',
      () =>
        ledger.run(paymentKey('PAY_DIRECT', 'REFUNDED'), () => undefined, {
          raiseMark: false,
          completedTtlMs: 86_400_000,
        }),
    ],
  ] as const) {
    expect((await refund()).outcome).toBe('processed');
    outcomes.push((await runOnce(ledger, paymentKey(payment, 'SUCCESS'), () => undefined)).outcome);
  }
  expect(outcomes).toEqual(['superseded', 'superseded']);
});
