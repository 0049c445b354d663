// Compile-time checks (npm run typecheck): params built from untrusted request input (a method
// chosen at runtime, a `string` bank code) reach create through parse, under tsc --strict, with
// no cast. parse applies create's rules and throws create's errors (test/integration/client-parse.test.ts).
import type { MyrGateway, PaymentCreateParams, WithdrawalCreateParams } from '../../src/index.js';

declare const gateway: MyrGateway;
// What a merchant's route handler has: strings from a form or a JSON body.
declare const form: { method: string; bank: string; amount: string; order: string; name: string; phone: string };
declare const payoutForm: Record<string, string | undefined>;

export async function checkout() {
  const params = gateway.payments.parse({
    amount: form.amount,
    reference_id: form.order,
    customer_name: form.name,
    customer_phone: form.phone,
    payment_method: form.method,
    metadata: form.method === 'BANK_TRANSFER' ? { provider_channel_id: form.bank } : undefined,
  });
  const typed: PaymentCreateParams = params;
  const payment = await gateway.payments.create(params);
  return [typed, payment.customer_redirect_url];
}

export async function payout() {
  const params = gateway.withdrawals.parse(payoutForm);
  const typed: WithdrawalCreateParams = params;
  const withdrawal = await gateway.withdrawals.create(params);
  const recovered = await gateway.withdrawals.recover(gateway.withdrawals.parse(payoutForm));
  return [typed, withdrawal.reference_id, recovered.created];
}

export function unknownInput(body: unknown) {
  // Anything at all may be handed in: the rules, not the type, decide.
  return [gateway.payments.parse(body), gateway.withdrawals.parse(body)];
}
