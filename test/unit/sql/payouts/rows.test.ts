/**
 * src/sql/payouts/rows.ts: a stored row read back whatever types the driver gives (Postgres's
 * BIGINT and INTEGER as text, MySQL's numbers), a row the outbox did not write refused with a
 * typed error that shows none of its text, the account number never in a remembered error, and
 * a claim id a BIGINT holds.
 */
import { inspect } from 'node:util';
import { describe, expect, it } from 'vitest';
import { MyrGatewayError, OutcomeUnknownError } from '../../../../src/index.js';
import { claimId, errorText, payoutRow, payoutStatementsOf } from '../../../../src/sql/payouts/rows.js';

const params = {
  amount: '250.00',
  reference_id: 'PAYOUT1',
  bank_code: 'PBBEMYKL',
  account_number: '5140123456789',
  account_name: 'Tan Wei Ming',
};
const stored = {
  reference_id: 'PAYOUT1',
  state: 'sending',
  params: JSON.stringify(params),
  amount: '250.00',
  attempts: '2',
  payment_id: 'WD_1',
  last_error: null,
  refusal: null,
  staged_at: '1764403200000',
};

describe('payoutRow', () => {
  it('reads a row as the drivers answer it', () => {
    expect(payoutRow(stored)).toEqual({
      referenceId: 'PAYOUT1',
      state: 'sending',
      params,
      accountNumber: params.account_number,
      amount: '250.00',
      attempts: 2,
      paymentId: 'WD_1',
      lastError: undefined,
      refusal: undefined,
      stagedAt: 1_764_403_200_000,
    });
    expect(payoutRow({ ...stored, attempts: 3, refusal: '{"code":"INVALID_BANK_CODE","message":"no"}' })).toMatchObject(
      { attempts: 3, refusal: { code: 'INVALID_BANK_CODE', message: 'no' } },
    );
  });

  it('reads a sent or final row without its request (never sent again), so a lookup or a callback settles it whatever its params hold', () => {
    for (const state of ['sent', 'succeeded', 'failed', 'refused']) {
      expect(payoutRow({ ...stored, state })).toMatchObject({
        state,
        params: undefined,
        accountNumber: params.account_number,
      });
      expect(payoutRow({ ...stored, state, params: 'x5140123456789' })).toMatchObject({
        state,
        params: undefined,
        accountNumber: undefined,
      });
    }
  });

  it.each([
    ['a state the outbox never writes', { state: 'paid' }, /its state/],
    ['params that are not JSON', { params: 'x5140123456789' }, /its params/],
    ['params that are null', { params: 'null' }, /its params/],
    ["another payout's request", { params: JSON.stringify({ ...params, reference_id: 'PAYOUT2' }) }, /its params/],
    ['a request of another amount', { params: JSON.stringify({ ...params, amount: '25000.00' }) }, /its params/],
    [
      'a request without an account',
      { params: JSON.stringify({ ...params, account_number: 5140123456789 }) },
      /its params/,
    ],
    ['a refusal that is not JSON', { refusal: 'no 5140123456789' }, /its refusal/],
    ['a refusal without its code', { refusal: '{"message":"no"}' }, /its refusal/],
  ])('refuses %s with PAYOUT_ROW_INVALID, showing none of the row', (_, change, why) => {
    let thrown: unknown;
    try {
      payoutRow({ ...stored, ...change });
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(MyrGatewayError);
    expect(thrown).toMatchObject({ code: 'PAYOUT_ROW_INVALID', retryable: false, message: expect.stringMatching(why) });
    const shown = `${String(thrown)} ${JSON.stringify(thrown)} ${inspect(thrown)}`;
    expect(shown).toContain('PAYOUT1');
    expect(shown).not.toContain('6789');
    expect(shown).not.toContain('25000');
  });
});

describe('errorText', () => {
  it('keeps the code and the message with the account number masked, however it is spelled, at most 400 characters', () => {
    const error = new OutcomeUnknownError(`bank said 5140-1234-56789 and 5140123456789 ${'x'.repeat(600)}`, {
      referenceId: 'PAYOUT1',
    });
    const text = errorText(error, params.account_number);
    expect(text.code).toBe('OUTCOME_UNKNOWN');
    expect(text.message).toMatch(/^bank said \*{4}6789 and \*{4}6789 x+$/);
    expect(text.message).toHaveLength(400);
    expect(errorText('boom', params.account_number)).toEqual({ code: 'UNKNOWN', message: 'boom' });
  });

  it("cuts a code that is not a short word (not the service's), so code and message fit last_error's 500 characters", () => {
    const text = errorText({ code: 'X'.repeat(1000), message: 'y'.repeat(1000) }, params.account_number);
    expect(text.code).toHaveLength(64);
    expect(`${text.code}: ${text.message}`.length).toBeLessThanOrEqual(500);
  });

  it('says the code once when the message begins with it', () => {
    const error = new OutcomeUnknownError('OUTCOME_UNKNOWN: the answer was lost', { referenceId: 'PAYOUT1' });
    expect(errorText(error, params.account_number)).toEqual({
      code: 'OUTCOME_UNKNOWN',
      message: 'the answer was lost',
    });
  });
});

describe('claimId and payoutStatementsOf', () => {
  it('draws whole numbers below 2^53 that differ', () => {
    const ids = Array.from({ length: 100 }, claimId);
    for (const id of ids) expect(Number.isSafeInteger(id) && id >= 0).toBe(true);
    expect(new Set(ids).size).toBe(100);
  });

  it('picks each dialect its own statements', () => {
    expect(payoutStatementsOf('postgres').due.text('t')).toContain('SKIP LOCKED');
    expect(payoutStatementsOf('mysql').due.text('t')).toContain('SKIP LOCKED');
    expect(payoutStatementsOf('sqlite').due.text('t')).not.toContain('FOR UPDATE');
  });
});
