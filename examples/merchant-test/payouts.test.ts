// payouts.test.ts
import { afterAll, afterEach, beforeAll, expect, it } from 'vitest';
import { MyrGateway, type WithdrawalCreateParams } from 'myr-gateway';
import { createMockGateway } from 'myr-gateway/testing';

const mock = createMockGateway();
beforeAll(() => mock.listen());
afterEach(() => mock.reset()); // the client's cached token stays valid across resets
afterAll(() => mock.close());

// Retries wait 1 ms instead of the spec's 1 s, 2 s, 4 s.
const gateway = new MyrGateway({ baseUrl: mock.baseUrl, ...mock.merchant, retry: { baseDelayMs: 1, jitterMs: 0 } });

const payout = (reference_id: string): WithdrawalCreateParams => ({
  amount: 250,
  reference_id,
  bank_code: 'PBBEMYKL',
  account_number: '5140123456789',
  account_name: 'Tan Wei Ming',
});

it('pays out', async () => {
  const withdrawal = await gateway.withdrawals.create(payout('PAYOUT7780'));
  expect(withdrawal.status).toBe('PROCESSING');
});

it('does not pay out twice when the answer is lost', async () => {
  const params = payout('PAYOUT7781');
  mock.fault({ endpoint: 'withdraw', when: 'after', response: { type: 'networkError' } });

  await expect(gateway.withdrawals.create(params)).rejects.toMatchObject({ code: 'OUTCOME_UNKNOWN' });
  expect(mock.getWithdrawal('PAYOUT7781')?.status).toBe('PROCESSING'); // it did happen
  expect(mock.count('withdraw')).toBe(1); // and was not retried

  const recovery = await gateway.withdrawals.recover(params); // same reference_id: 409
  expect(recovery.created).toBe(false);
  expect(mock.withdrawals).toHaveLength(1);
});
