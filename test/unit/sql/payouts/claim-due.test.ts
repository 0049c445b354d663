/**
 * src/sql/payouts/claim-due.ts, `actionOf`, every row: what a drain does with a due payout. The
 * money rule in it: a payout whose request may be at the service (`sending`) is only ever
 * recovered with its own params, never created afresh; a `sent` one is only looked up.
 */
import { describe, expect, it } from 'vitest';
import { actionOf, type ClaimAction } from '../../../../src/sql/payouts/claim-due.js';
import type { PayoutRow } from '../../../../src/sql/payouts/rows.js';
import type { PayoutState } from '../../../../src/sql/payouts/statement-shape.js';

const refusal = { code: 'INSUFFICIENT_BALANCE', message: 'not enough' };
const rowOf = (state: PayoutState, refused: boolean): PayoutRow => ({
  referenceId: 'PAYOUT1',
  state,
  params: undefined,
  accountNumber: undefined,
  amount: '250.00',
  attempts: 1,
  paymentId: undefined,
  lastError: undefined,
  refusal: refused ? refusal : undefined,
  stagedAt: 0,
});

describe('actionOf', () => {
  it.each<[PayoutState, boolean, ClaimAction]>([
    ['staged', false, 'create'],
    ['sending', false, 'recover'],
    ['sent', false, 'lookup'],
    // A refusal whose hook threw is run again, never sent again.
    ['staged', true, 'refuse'],
    ['sending', true, 'refuse'],
    // A sent payout is at the service: only its status settles it, whatever the row remembers.
    ['sent', true, 'lookup'],
  ])('a %s row (refusal kept: %s) is %s', (state, refused, action) => {
    expect(actionOf(rowOf(state, refused))).toBe(action);
  });
});
