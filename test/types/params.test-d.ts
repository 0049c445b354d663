// Compile-time checks, run by `npm run typecheck`: the param types make the spec's rules
// visible in the editor before anything runs.
import type { MyrGateway, PaymentCreateParams, WithdrawalCreateParams } from '../../src/index.js';

declare const gateway: MyrGateway;

const base = { amount: 10, reference_id: 'R1', customer_name: 'A', customer_phone: '60123' };

// BANK_TRANSFER needs metadata.provider_channel_id from the bank lists.
// @ts-expect-error metadata is required for BANK_TRANSFER
const missing: PaymentCreateParams = { ...base, payment_method: 'BANK_TRANSFER' };
// @ts-expect-error not a bank code of group A or B
const unknownBank: PaymentCreateParams = {
  ...base,
  payment_method: 'BANK_TRANSFER',
  metadata: { provider_channel_id: 'MAYBANK' },
};
const bank: PaymentCreateParams = {
  ...base,
  payment_method: 'BANK_TRANSFER',
  metadata: { provider_channel_id: 'MB2U0227' },
};
const qr: PaymentCreateParams = { ...base, payment_method: 'QR_PAYMENT' };
// @ts-expect-error unknown payment method
const card: PaymentCreateParams = { ...base, payment_method: 'CARD' };
// @ts-expect-error only MYR exists
const usd: PaymentCreateParams = { ...base, payment_method: 'QR_PAYMENT', currency: 'USD' };

const wallet: WithdrawalCreateParams = {
  amount: 50,
  reference_id: 'W1',
  bank_code: 'X',
  account_number: '1',
  account_name: 'A',
  // @ts-expect-error method is always BANK
  method: 'WALLET',
};

async function results() {
  const payment = await gateway.payments.create(qr);
  const url: string = payment.customer_redirect_url;
  const id: string = payment.payment_id;
  const status = await gateway.payments.retrieve(id);
  const completed: string | null | undefined = status.completed_at;
  return [url, completed];
}

export { missing, unknownBank, bank, card, usd, wallet, results };

// PaymentStatus is written out by hand (zod's inference needs strict); the schema's output
// must still be exactly what it promises.
import type * as z from 'zod/mini';
import type { PaymentStatus } from '../../src/index.js';
import type { paymentStatusSchema } from '../../src/schemas/payments.js';
const parsedIsPaymentStatus = (parsed: z.output<typeof paymentStatusSchema>): PaymentStatus => parsed;
const paymentStatusIsParsed = (status: PaymentStatus): z.output<typeof paymentStatusSchema> => status;
export { parsedIsPaymentStatus, paymentStatusIsParsed };
