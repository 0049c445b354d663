import { describe, expect, it } from 'vitest';
import { paymentKey, paymentOfKey } from '../../../src/webhooks/payment-key.js';

describe('paymentKey: one key per payment outcome', () => {
  it('names the payment and the status, so two outcomes of one payment are two keys', () => {
    expect(paymentKey('PAY_1', 'SUCCESS')).toBe('payment:PAY_1:SUCCESS');
    expect(paymentKey('PAY_1', 'REFUNDED')).not.toBe(paymentKey('PAY_1', 'SUCCESS'));
  });
});

describe("paymentOfKey: the payment outcome a key of paymentKey's shape names (runOnce without `payment`)", () => {
  it.each([
    ['payment:PAY_1:SUCCESS', { payment_id: 'PAY_1', status: 'SUCCESS' }],
    ['payment:PAY_1:REFUNDED', { payment_id: 'PAY_1', status: 'REFUNDED' }],
    // The last ':' splits: a payment id may hold one, a status of the spec never does.
    ['payment:PAY:1:FAILED', { payment_id: 'PAY:1', status: 'FAILED' }],
  ])('%s names %o', (key, payment) => {
    expect(paymentOfKey(key)).toEqual(payment);
    expect(paymentKey(payment.payment_id, payment.status)).toBe(key);
  });

  it.each([
    ['a key of your own', 'order:ORDER_1'],
    ["a delivery's key", 'webhook:WH_1'],
    ['a status the spec does not name (a job of your own under the payment)', 'payment:PAY_1:receipt-email'],
    ['a status in lower case', 'payment:PAY_1:success'],
    ['no payment id', 'payment::SUCCESS'],
    ['no status', 'payment:PAY_1:'],
    ['no separator', 'payment:SUCCESS'],
    ['another prefix', 'payments:PAY_1:SUCCESS'],
  ])('%s (%s) names none', (_, key) => {
    expect(paymentOfKey(key)).toBeUndefined();
  });
});
