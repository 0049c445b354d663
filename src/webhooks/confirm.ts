/**
 * Cross-checking a callback against the status API before acting on it.
 *
 * @module
 */
import { InvalidRequestError } from '../core/errors/base.js';
import { amountText, sameAmount } from '../schemas/amount.js';
import type { WebhookEvent } from './events.js';
import type { PaymentStatus } from '../schemas/statuses.js';

/**
 * Anything that can look a payment up, such as a `MyrGateway` client. Structural, so
 * the webhooks entry point does not depend on the client.
 */
export interface PaymentStatusSource {
  /** The payments resource. */
  payments: {
    /** Looks a payment up by payment_id or reference_id. */
    retrieve(identifier: string): Promise<PaymentStatus>;
  };
}

/** What the merchant expects the payment to be, from its own order records. */
export interface ExpectedDeposit {
  /**
   * The order's amount in MYR, as a number or a decimal string (keep money as strings,
   * docs/amounts.md). Compared exactly, digit by digit, as `payments.create` judges amounts:
   * `'149.90'` and `149.9` match a signed 149.9; `'149.904'` does not. A value that is not a
   * plain decimal (`'1e2'`, `'149,90'`, `NaN`) is refused with {@link InvalidRequestError}.
   * @example '149.90'
   */
  amount?: number | string | undefined;
  /** The order's reference. */
  reference_id?: string | undefined;
}

/** Why a deposit could not be confirmed. */
export type DepositMismatch =
  'not_a_deposit' | 'payment_id' | 'reference_id' | 'amount' | 'status' | 'expected_amount' | 'expected_reference_id';

/** The result of {@link confirmDeposit}. */
export type DepositConfirmation =
  | {
      /** The status API confirms the callback (and your expectations). */
      readonly confirmed: true;
      /** Always empty here; present on both variants so that code compiled without
       * `strictNullChecks` (where `!check.confirmed` does not narrow) can still read it. */
      readonly mismatches: readonly [];
      /** The status record that confirmed it. */
      readonly payment: PaymentStatus;
    }
  | {
      /** Something disagreed: do not fulfil. */
      readonly confirmed: false;
      /** Every field that disagreed. */
      readonly mismatches: readonly DepositMismatch[];
      /** The status record, when it was looked up. */
      readonly payment: PaymentStatus | undefined;
    };

/** The service's record against the signed callback: two JSON numbers, to the sen. */
const sameSen = (a: number, b: number) => Math.round(a * 100) === Math.round(b * 100);

/**
 * Confirms a deposit callback through the status API before fulfilling: looks the
 * payment up by its signed `payment_id` and checks that the service's own record has
 * the same reference, amount (to the sen) and status, and optionally that they match
 * your order. Use it for anything that ships goods or credits a balance.
 *
 * A status that has not caught up yet (`PROCESSING` against a `SUCCESS` callback) is a
 * mismatch: throw from your handler and the gateway's retry will try again. Errors of
 * the lookup itself (network, 5xx) propagate, with the same effect.
 *
 * @example
 * ```ts
 * async onEvent(event) {
 *   if (event.transaction_type !== 'DEPOSIT' || event.signed.status !== 'SUCCESS') return;
 *   const order = await orders.get(event.signed.reference_id);
 *   const check = await confirmDeposit(event, gateway, { amount: order.total });
 *   if (!check.confirmed) throw new Error(`deposit not confirmed: ${check.mismatches.join(', ')}`);
 *   await orders.fulfil(order.id);
 * }
 * ```
 */
export async function confirmDeposit(
  event: WebhookEvent,
  gateway: PaymentStatusSource,
  expected: ExpectedDeposit = {},
): Promise<DepositConfirmation> {
  if (expected.amount !== undefined && amountText(expected.amount) === undefined) {
    throw new InvalidRequestError(
      'VALIDATION_ERROR: confirmDeposit expected amount must be a finite number or a plain decimal string such as "149.90"',
      { code: 'VALIDATION_ERROR', field: 'amount' },
    );
  }
  if (event.transaction_type !== 'DEPOSIT')
    return { confirmed: false, mismatches: ['not_a_deposit'], payment: undefined };
  const signed = event.signed;
  const payment = await gateway.payments.retrieve(signed.payment_id);
  const mismatches: DepositMismatch[] = [];
  if (payment.payment_id !== signed.payment_id) mismatches.push('payment_id');
  if (payment.reference_id !== signed.reference_id) mismatches.push('reference_id');
  if (typeof payment.amount !== 'number' || !sameSen(payment.amount, signed.amount)) mismatches.push('amount');
  if (payment.status !== signed.status) mismatches.push('status');
  if (expected.amount !== undefined && !sameAmount(expected.amount, signed.amount)) mismatches.push('expected_amount');
  if (expected.reference_id !== undefined && expected.reference_id !== signed.reference_id) {
    mismatches.push('expected_reference_id');
  }
  return mismatches.length === 0
    ? { confirmed: true, mismatches: [], payment }
    : { confirmed: false, mismatches, payment };
}
