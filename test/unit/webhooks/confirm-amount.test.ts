/**
 * Issue 15: `confirmDeposit(event, gateway, { amount })` takes the order's amount as a number or
 * a decimal string (docs/amounts.md: keep money as strings), compared exactly as `create`
 * judges amounts: no float rounding, and a malformed amount is refused, never half-matched.
 */
import { describe, expect, it } from 'vitest';
import { InvalidRequestError } from '../../../src/index.js';
import { confirmDeposit, type PaymentStatusSource, WebhookVerifier } from '../../../src/webhooks/index.js';
import { API_KEY, NOW, callback } from '../../fixtures/webhook-vectors-helpers.js';

const verifier = new WebhookVerifier({ apiKey: API_KEY, clock: () => NOW });
const gateway: PaymentStatusSource = {
  payments: {
    retrieve: async (id) => ({
      payment_id: id,
      reference_id: 'ORDER1001',
      amount: 149.9,
      currency: 'MYR',
      status: 'SUCCESS',
    }),
  },
};
const paid = async () => verifier.verify({ body: (await callback({ amount: 149.9 })).raw });

describe('confirmDeposit with the expected amount as a string or a number', () => {
  it.each([
    ['149.90', true],
    ['149.9', true],
    [149.9, true],
    ['0149.90', true],
    ['149.91', false],
    ['149.904', false], // was rounded to the sen and confirmed
    [149.904, false],
    [149.899999, false],
  ] as const)('%j against a signed 149.9: confirmed %s', async (amount, confirmed) => {
    const result = await confirmDeposit(await paid(), gateway, { amount });
    expect(result.confirmed).toBe(confirmed);
    if (!result.confirmed) expect(result.mismatches).toEqual(['expected_amount']);
  });

  it.each(['1e2', '149,90', ' 149.90', 'RM149.90', '', Number.NaN])(
    'refuses the malformed expected amount %j with InvalidRequestError naming amount',
    async (amount) => {
      const error = await confirmDeposit(await paid(), gateway, { amount }).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(InvalidRequestError);
      expect((error as InvalidRequestError).field).toBe('amount');
    },
  );
});
