/**
 * src/schemas/payments.ts: the rules chosen by payment method (BANK_TRANSFER needs a provider
 * channel from the spec's lists, QR and wallet do not) and where the customer is sent, per the
 * spec's table: payment_url for QR_PAYMENT, the gateway's redirect_url otherwise.
 */
import { describe, expect, it } from 'vitest';
import * as z from 'zod/mini';
import { customerRedirectUrl, paymentCreateParamsSchema } from '../../../src/schemas/payments.js';

const base = {
  amount: '120.50',
  reference_id: 'ORDER1001',
  customer_name: 'Aisyah Rahman',
  customer_phone: '60123456789',
};

describe('paymentCreateParamsSchema', () => {
  it('BANK_TRANSFER needs metadata.provider_channel_id from the bank lists', () => {
    const bank = { ...base, payment_method: 'BANK_TRANSFER' };
    expect(z.safeParse(paymentCreateParamsSchema(bank), bank).success).toBe(false);
    const withChannel = { ...bank, metadata: { provider_channel_id: 'MB2U0227' } };
    expect(z.safeParse(paymentCreateParamsSchema(withChannel), withChannel)).toMatchObject({
      success: true,
      data: { amount: 120.5 },
    });
    const unknownChannel = { ...bank, metadata: { provider_channel_id: 'NOPE0001' } };
    expect(z.safeParse(paymentCreateParamsSchema(unknownChannel), unknownChannel).success).toBe(false);
  });

  it('QR_PAYMENT and MOBILE_WALLET need no channel', () => {
    for (const payment_method of ['QR_PAYMENT', 'MOBILE_WALLET']) {
      const params = { ...base, payment_method };
      expect(z.safeParse(paymentCreateParamsSchema(params), params).success).toBe(true);
    }
  });
});

describe('customerRedirectUrl', () => {
  const payment = {
    payment_url: 'https://pay.example.test/p/1',
    gateway: { redirect_url: 'https://bank.example.test/r/1' },
  };
  it.each([
    ['QR_PAYMENT', 'https://pay.example.test/p/1'],
    ['BANK_TRANSFER', 'https://bank.example.test/r/1'],
    ['MOBILE_WALLET', 'https://bank.example.test/r/1'],
  ] as const)('%s sends the customer to %s', (method, url) => {
    expect(customerRedirectUrl(method, payment)).toBe(url);
  });
});
