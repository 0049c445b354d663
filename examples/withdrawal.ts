/**
 * Paying out safely: what to do when a withdrawal's answer is lost.
 *
 * Runs against the built-in mock: `npx tsx examples/withdrawal.ts`. The mock processes the
 * withdrawal and then drops the connection, as a real network can. The SDK does not send it
 * again (that could pay out twice); it throws OutcomeUnknownError, and we reconcile through
 * the status API before deciding anything.
 */
import { MyrGateway, NotFoundError, OutcomeUnknownError, type WithdrawalCreateParams } from 'myr-gateway';
import { createMockGateway } from 'myr-gateway/testing';

const mock = createMockGateway();
mock.listen();
const gateway = new MyrGateway({ baseUrl: mock.baseUrl, ...mock.merchant });

async function payOut(params: WithdrawalCreateParams): Promise<string> {
  try {
    const withdrawal = await gateway.withdrawals.create(params);
    return `accepted: ${withdrawal.payment_id ?? withdrawal.reference_id} is ${withdrawal.status}`;
  } catch (error) {
    if (!(error instanceof OutcomeUnknownError)) throw error;
    // Never resend blindly. Ask the service what happened to this reference.
    try {
      const status = await gateway.payments.retrieve(error.referenceId);
      return `answer was lost, but the service has it: ${status.payment_id} is ${status.status}; do not send again`;
    } catch (lookup) {
      if (lookup instanceof NotFoundError) return 'answer was lost and the service has no record: safe to send again';
      return 'outcome still unknown: wait for the callback, then decide';
    }
  }
}

mock.fault({ endpoint: 'withdraw', when: 'after', response: { type: 'networkError' } });
console.log(
  await payOut({
    amount: 250,
    reference_id: `PAYOUT${Date.now()}`,
    bank_code: 'PBBEMYKL',
    account_number: '5140123456789',
    account_name: 'Tan Wei Ming',
  }),
);
console.log(`withdraw requests the mock received: ${mock.count('withdraw')}`);
mock.close();
