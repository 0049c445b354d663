import { describe, expect, it } from 'vitest';
import { ledgerStatementsOf } from '../../../../src/sql/dialects/ledger-statements-of.js';
import { claimRowOf, orderOf } from '../../../../src/sql/ledger/claim-key.js';
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

describe('orderOf: the payment a run keeps', () => {
  it.each([
    ['the one given, whatever the key', 'reconcile:PAY_9', pay1, pay1],
    [
      'the one a paymentKey names, when none is given',
      paymentKey('PAY_2', 'REFUNDED'),
      undefined,
      { paymentId: 'PAY_2', rank: lifecycleRank('REFUNDED') },
    ],
    ['none for a key of another shape', 'webhook:dlv_1', undefined, undefined],
    ['none for a status the spec does not name', 'payment:PAY_3:SETTLED', undefined, undefined],
  ] as const)('%s', (_, key, given, expected) => {
    expect(orderOf(key, given)).toEqual(expected);
  });
});

describe("claimRowOf: a payment outcome's run on Postgres claims in its payment's row alone", () => {
  it.each([
    ['postgres', paymentKey('PAY_1', 'SUCCESS'), pay1, markRow('PAY_1')],
    [
      'postgres',
      paymentKey('PAY_1', 'REFUNDED'),
      { paymentId: 'PAY_1', rank: lifecycleRank('REFUNDED') },
      markRow('PAY_1'),
    ],
    // Keyed by delivery: nothing kept for good, so its own row holds the claim.
    ['postgres', 'webhook:dlv_1', pay1, keyRow('webhook:dlv_1')],
    // A status the spec does not name has no bit in the payment's row.
    ['postgres', 'payment:PAY_1:SETTLED', pay1, keyRow('payment:PAY_1:SETTLED')],
    // A key naming another payment than the one given is not that payment's outcome.
    ['postgres', paymentKey('PAY_2', 'SUCCESS'), pay1, keyRow(paymentKey('PAY_2', 'SUCCESS'))],
    ['postgres', 'reconcile:PAY_1', undefined, keyRow('reconcile:PAY_1')],
    ['mysql', paymentKey('PAY_1', 'SUCCESS'), pay1, keyRow(paymentKey('PAY_1', 'SUCCESS'))],
    ['sqlite', paymentKey('PAY_1', 'SUCCESS'), pay1, keyRow(paymentKey('PAY_1', 'SUCCESS'))],
  ] as const)('%s: %s', (dialect, key, order, row) => {
    expect(claimRowOf(statements[dialect], key, order)).toBe(row);
  });
});
