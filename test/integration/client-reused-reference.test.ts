/**
 * Issue 14 item 8: after an ambiguous payment create, the retry's DUPLICATE_REFERENCE starts a
 * lookup; a payment that held the reference before the call started (a reused reference) must
 * never come back as this call's payment, nor as "created, URL lost".
 */
import { describe, expect, it } from 'vitest';
import { DuplicateReferenceError, PaymentUrlUnavailableError } from '../../src/index.js';
import { caught, clientFor, paymentParams } from '../helpers/client.js';
import { clockedMock } from '../helpers/clocked-mock.js';

const { mock, now, time } = clockedMock();
const DAY = 86_400_000;

describe('payment create after a lost answer, when the reference_id was used before', () => {
  it('a reused reference of a paid payment is DuplicateReferenceError carrying that payment, never "created"', async () => {
    const { gateway } = clientFor(mock, { now });
    const params = paymentParams('QR_PAYMENT', 300);
    const old = await gateway.payments.create(params);
    await mock.completePayment(old.payment_id, 'SUCCESS', { deliver: false });
    time.clock += DAY;

    mock.fault({ endpoint: 'payment.create', when: 'after', response: { type: 'networkError' } });
    const error = await caught(gateway.payments.create({ ...params }));
    expect(error).toBeInstanceOf(DuplicateReferenceError);
    expect(error).not.toBeInstanceOf(PaymentUrlUnavailableError);
    const duplicate = error as unknown as DuplicateReferenceError;
    expect(duplicate.existingPayment?.payment_id).toBe(old.payment_id);
    expect(duplicate.existingPayment?.status).toBe('SUCCESS');
    expect(duplicate.earlierAttemptMayHaveSucceeded).toBe(false);
    expect(duplicate.referenceId).toBe(params.reference_id);
    expect(error.message).toContain('(SUCCESS, amount 300');
    expect(error.message).not.toContain('never paid');
  });

  it('a reused reference of an older payment still open is DuplicateReferenceError: it was created before this call', async () => {
    const { gateway } = clientFor(mock, { now });
    const params = paymentParams('BANK_TRANSFER', 300);
    const old = await gateway.payments.create(params);
    time.clock += 10 * 60_000; // beyond the 5-minute clock tolerance, inside the 15-minute expiry
    mock.fault({
      endpoint: 'payment.create',
      when: 'after',
      response: { type: 'status', status: 502, code: 'GATEWAY_ERROR' },
    });
    const error = await caught(gateway.payments.create({ ...params }));
    expect(error).toBeInstanceOf(DuplicateReferenceError);
    expect((error as unknown as DuplicateReferenceError).existingPayment?.payment_id).toBe(old.payment_id);
    expect(error.message).toContain(`created ${mock.getPayment(params.reference_id)?.created_at}), not this call's`);
  });

  it("the payment this call made (same amount, open, created during the call) is still reported as this call's", async () => {
    const { gateway } = clientFor(mock, { now });
    const params = paymentParams('BANK_TRANSFER', 300);
    mock.fault({ endpoint: 'payment.create', when: 'after', response: { type: 'networkError' } });
    const error = await caught(gateway.payments.create(params));
    expect(error).toBeInstanceOf(PaymentUrlUnavailableError);
    expect((error as unknown as PaymentUrlUnavailableError).existingPayment.payment_id).toBe(
      mock.getPayment(params.reference_id)?.payment_id,
    );
  });
});
