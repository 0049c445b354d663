/**
 * Issue 23: params from request input. `payments.parse` and `withdrawals.parse` apply create's
 * rules and throw create's errors (same class, code, field and message), send nothing, and
 * return params that create accepts as they are.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { InvalidRequestError } from '../../src/index.js';
import { createMockGateway } from '../../src/testing/index.js';
import { caught, clientFor, paymentParams, withdrawalParams } from '../helpers/client.js';

const mock = createMockGateway();
beforeAll(() => mock.listen());
afterEach(() => mock.reset());
afterAll(() => mock.close());

function thrown(fn: () => unknown): unknown {
  try {
    fn();
  } catch (error) {
    return error;
  }
  throw new Error('expected a throw');
}

describe('payments.parse', () => {
  it.each([
    ['an amount below the minimum', { amount: '4.99' }],
    ['an unknown method', { payment_method: 'CARD' }],
    ['a bank transfer without a bank', { payment_method: 'BANK_TRANSFER' }],
    [
      'a bank transfer with an unknown bank',
      { payment_method: 'BANK_TRANSFER', metadata: { provider_channel_id: 'MAYBANK' } },
    ],
    ['a phone with +', { customer_phone: '+60123456789' }],
  ])('refuses %s with the error create throws, before any request', async (_name, patch) => {
    const { gateway } = clientFor(mock);
    const input: unknown = { ...paymentParams('QR_PAYMENT'), ...patch };
    const fromParse = thrown(() => gateway.payments.parse(input));
    const fromCreate = await caught(gateway.payments.create(input as never));
    expect(fromParse).toBeInstanceOf(InvalidRequestError);
    expect(fromParse).toMatchObject({ code: fromCreate.code, field: fromCreate.field, message: fromCreate.message });
    expect(mock.count()).toBe(0);
  });

  it('refuses what is not an object', () => {
    const { gateway } = clientFor(mock);
    expect(thrown(() => gateway.payments.parse('ORDER1'))).toMatchObject({ code: 'VALIDATION_ERROR' });
  });

  it('returns params create accepts, for a method and a bank chosen at runtime', async () => {
    const { gateway } = clientFor(mock);
    const method: string = 'BANK_TRANSFER';
    const bank: string = 'MB2U0227';
    const params = gateway.payments.parse({
      ...paymentParams('QR_PAYMENT'),
      payment_method: method,
      metadata: { provider_channel_id: bank },
      extra: 'dropped',
    });
    expect(params).toMatchObject({ payment_method: 'BANK_TRANSFER', metadata: { provider_channel_id: 'MB2U0227' } });
    expect(params).not.toHaveProperty('extra');
    const payment = await gateway.payments.create(params);
    expect(payment.payment_id).toMatch(/^PAY_/);
  });
});

describe('withdrawals.parse', () => {
  it.each([
    ['an amount below the minimum', { amount: 49.99 }],
    ['a bank code with spaces', { bank_code: 'MAY BANK' }],
    ['an account number with spaces', { account_number: '5140 1234' }],
    ['a blank account name', { account_name: '  ' }],
  ])('refuses %s with the error create throws, before any request', async (_name, patch) => {
    const { gateway } = clientFor(mock);
    const input: unknown = { ...withdrawalParams(), ...patch };
    const fromParse = thrown(() => gateway.withdrawals.parse(input));
    const fromCreate = await caught(gateway.withdrawals.create(input as never));
    expect(fromParse).toBeInstanceOf(InvalidRequestError);
    expect(fromParse).toMatchObject({ code: fromCreate.code, field: fromCreate.field, message: fromCreate.message });
    expect(mock.count()).toBe(0);
  });

  it('returns params create accepts, from string fields', async () => {
    const { gateway } = clientFor(mock);
    const form: Record<string, string> = { ...withdrawalParams(), amount: '250.00' };
    const withdrawal = await gateway.withdrawals.create(gateway.withdrawals.parse(form));
    expect(withdrawal).toMatchObject({ reference_id: form.reference_id, amount: 250 });
  });
});
