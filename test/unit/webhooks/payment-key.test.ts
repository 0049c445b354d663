import { describe, expect, it } from 'vitest';
import { paymentKey } from '../../../src/webhooks/payment-key.js';

describe('paymentKey: one key per payment outcome', () => {
  it('names the payment and the status, so two outcomes of one payment are two keys', () => {
    expect(paymentKey('PAY_1', 'SUCCESS')).toBe('payment:PAY_1:SUCCESS');
    expect(paymentKey('PAY_1', 'REFUNDED')).not.toBe(paymentKey('PAY_1', 'SUCCESS'));
  });
});
