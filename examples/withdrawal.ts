/**
 * Paying out safely: what to do when a withdrawal's answer is lost.
 *
 * Runs against the built-in mock: `npx tsx examples/withdrawal.ts`. The mock processes the
 * withdrawal and then drops the connection, as a real network can. The SDK does not send it
 * again (that could pay out twice); it throws OutcomeUnknownError. We never "look it up and
 * resend on not found" (the status endpoint may not know withdrawals, or may show a deposit
 * with the same reference); withdrawals.recover resends the same request, which the service
 * refuses if the first one arrived.
 */
import { MyrGateway, OutcomeUnknownError, type WithdrawalCreateParams } from 'myr-gateway';
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
    try {
      const recovery = await gateway.withdrawals.recover(params);
      if (recovery.created === true)
        return `the first request never arrived; sent now: ${recovery.withdrawal.payment_id ?? params.reference_id}`;
      return `answer was lost, but the first request arrived (${recovery.referenceId}); do not send again, wait for the callback`;
    } catch (again) {
      if (again instanceof OutcomeUnknownError)
        return 'outcome still unknown: call recover again later, or wait for the callback';
      throw again;
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
const refused = mock.requests.filter((r) => r.endpoint === 'withdraw' && r.status === 409).length;
console.log(`withdraw requests the mock received: ${mock.count('withdraw')}, refused as duplicates: ${refused}`);
mock.close();
