import { describe, expect, it } from 'vitest';
import { ledgerStatementsOf } from '../../../../src/sql/dialects/ledger-statements-of.js';
import { claimRowOf, paymentOfRun } from '../../../../src/sql/ledger/claim-key.js';
import { keyRow, markRow } from '../../../../src/sql/ledger/claims.js';
import { lifecycleRank } from '../../../../src/webhooks/lifecycle.js';
import { paymentKey } from '../../../../src/webhooks/payment-key.js';

const table = { qualified: 't', bare: 't' };
const statements = {
  postgres: ledgerStatementsOf('postgres', table),
  mysql: ledgerStatementsOf('mysql', table),
  sqlite: ledgerStatementsOf('sqlite', table),
};
const pay1 = { paymentId: 'PAY_1', rank: lifecycleRank('SUCCESS') };

describe('paymentOfRun: the payment a run keeps, and whether it raises the mark', () => {
  const refunded = { paymentId: 'PAY_2', rank: lifecycleRank('REFUNDED') };
  it.each([
    ['the order given, whatever the key', 'reconcile:PAY_9', pay1, false, { order: pay1, raiseMark: false }],
    [
      'the order given, its raiseMark as given',
      paymentKey('PAY_2', 'REFUNDED'),
      refunded,
      false,
      { order: refunded, raiseMark: false },
    ],
    [
      "a paymentKey's, when none is given: a SUCCESS does not raise",
      paymentKey('PAY_1', 'SUCCESS'),
      undefined,
      false,
      { order: pay1, raiseMark: false },
    ],
    [
      "a paymentKey's REFUNDED raises, as runOnce's does",
      paymentKey('PAY_2', 'REFUNDED'),
      undefined,
      false,
      { order: refunded, raiseMark: true },
    ],
    ['none for a key of another shape', 'webhook:dlv_1', undefined, true, { order: undefined, raiseMark: true }],
    [
      'none for a status the spec does not name',
      'payment:PAY_3:SETTLED',
      undefined,
      false,
      { order: undefined, raiseMark: false },
    ],
  ] as const)('%s', (_, key, given, raiseMark, expected) => {
    expect(paymentOfRun(key, given, raiseMark)).toEqual(expected);
  });
});

describe("claimRowOf: a payment outcome's run on Postgres, on a client that checks its transaction in COMMIT, claims in its payment's row alone", () => {
  it.each([
    ['postgres', paymentKey('PAY_1', 'SUCCESS'), pay1, true, markRow('PAY_1')],
    [
      'postgres',
      paymentKey('PAY_1', 'REFUNDED'),
      { paymentId: 'PAY_1', rank: lifecycleRank('REFUNDED') },
      true,
      markRow('PAY_1'),
    ],
    // Kysely, Drizzle, Prisma check the claimed row's claim_id before COMMIT: their own row.
    ['postgres', paymentKey('PAY_1', 'SUCCESS'), pay1, false, keyRow(paymentKey('PAY_1', 'SUCCESS'))],
    // Keyed by delivery: nothing kept for good, so its own row holds the claim.
    ['postgres', 'webhook:dlv_1', pay1, true, keyRow('webhook:dlv_1')],
    // A status the spec does not name has no bit in the payment's row.
    ['postgres', 'payment:PAY_1:SETTLED', pay1, true, keyRow('payment:PAY_1:SETTLED')],
    // A key naming another payment than the one given is not that payment's outcome.
    ['postgres', paymentKey('PAY_2', 'SUCCESS'), pay1, true, keyRow(paymentKey('PAY_2', 'SUCCESS'))],
    ['postgres', 'reconcile:PAY_1', undefined, true, keyRow('reconcile:PAY_1')],
    ['mysql', paymentKey('PAY_1', 'SUCCESS'), pay1, true, keyRow(paymentKey('PAY_1', 'SUCCESS'))],
    ['sqlite', paymentKey('PAY_1', 'SUCCESS'), pay1, true, keyRow(paymentKey('PAY_1', 'SUCCESS'))],
  ] as const)('%s: %s (checked in COMMIT: %s)', (dialect, key, order, commitChecked, row) => {
    expect(claimRowOf(statements[dialect], key, order, commitChecked)).toBe(row);
  });
});
