/**
 * src/core/errors/outcome.ts: the errors about a money outcome fix their own code and
 * retryability (a lost withdrawal answer must never look safe to resend), and carry into logs
 * what the merchant needs to act on (the existing payment, its expiry, the last status seen).
 */
import { describe, expect, it } from 'vitest';
import {
  OutcomeUnknownError,
  PaymentPendingError,
  PaymentUrlUnavailableError,
} from '../../../../src/core/errors/outcome.js';

const existing = {
  payment_id: 'pay_1',
  reference_id: 'ORDER1',
  status: 'PENDING',
  amount: 120.5,
  currency: 'MYR',
  expires_at: '2026-01-01T12:30:00Z',
};

describe('money outcome errors', () => {
  it('OutcomeUnknownError is OUTCOME_UNKNOWN and never retryable, whatever it is given', () => {
    const init = { referenceId: 'WD1', retryable: true, code: 'TIMEOUT' } as unknown as ConstructorParameters<
      typeof OutcomeUnknownError
    >[1];
    const error = new OutcomeUnknownError('withdrawal answer lost', init);
    expect(error).toMatchObject({ code: 'OUTCOME_UNKNOWN', retryable: false, referenceId: 'WD1' });
    expect(error.toJSON()).toMatchObject({ name: 'OutcomeUnknownError', referenceId: 'WD1', retryable: false });
  });

  it('PaymentUrlUnavailableError carries the existing payment and its expiry into logs', () => {
    const error = new PaymentUrlUnavailableError('no payment_url', {
      referenceId: 'ORDER1',
      existingPayment: existing,
    });
    expect(error).toMatchObject({
      code: 'PAYMENT_URL_UNAVAILABLE',
      retryable: false,
      expiresAt: '2026-01-01T12:30:00Z',
    });
    expect(JSON.parse(JSON.stringify(error))).toMatchObject({
      existingPayment: existing,
      expiresAt: '2026-01-01T12:30:00Z',
      referenceId: 'ORDER1',
    });
    const { expires_at: _dropped, ...withoutExpiry } = existing;
    expect(
      new PaymentUrlUnavailableError('no payment_url', { referenceId: 'ORDER1', existingPayment: withoutExpiry })
        .expiresAt,
    ).toBeUndefined();
  });

  it('PaymentPendingError is retryable and takes its reference from the last status seen', () => {
    const error = new PaymentPendingError('still pending', { identifier: 'pay_1', lastStatus: existing });
    expect(error).toMatchObject({
      code: 'PAYMENT_PENDING',
      retryable: true,
      referenceId: 'ORDER1',
      identifier: 'pay_1',
    });
    expect(error.toJSON()).toMatchObject({ identifier: 'pay_1', lastStatus: existing });
    expect(
      new PaymentPendingError('no answer', { identifier: 'ORDER2', lastStatus: undefined }).referenceId,
    ).toBeUndefined();
  });
});
