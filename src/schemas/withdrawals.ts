import * as z from 'zod/mini';
import {
  amountFromWire,
  amountSchema,
  CURRENCY,
  nonBlank,
  oneOf,
  referenceIdSchema,
  rule,
  WITHDRAWAL_AMOUNT,
} from './common.js';
import type { PaymentStatusValue } from './statuses.js';

const withdrawalAmount = amountSchema(WITHDRAWAL_AMOUNT, 'withdrawal');
const currency = z.optional(oneOf([CURRENCY], 'currency must be "MYR"'));
const bankCode = z
  .string({ error: 'bank_code must be a string' })
  .check(
    rule(
      (s: string) => /^[A-Za-z0-9_]{2,32}$/.test(s),
      'bank_code must be a bank or e-wallet code (letters and digits)',
    ),
  );
const accountNumber = z
  .string({ error: 'account_number must be a string' })
  .check(
    rule((s: string) => /^[0-9A-Za-z-]{4,64}$/.test(s), 'account_number must be 4 to 64 digits or letters (no spaces)'),
  );
const accountName = nonBlank('account_name');
const method = z.optional(oneOf(['BANK'], 'method must be "BANK" for MYR withdrawals'));

/** The fields of a withdrawal request, each with the spec's rule (checked before sending). */
type WithdrawalCreateShape = {
  /**
   * Amount in MYR: 50.00 to 50,000.00 inclusive, at most 2 decimal places. A number or a plain
   * decimal string (keep money as strings); judged on its decimal digits, never rounded, and
   * sent as a JSON number.
   * @example '250.00'
   */
  amount: typeof withdrawalAmount;
  /**
   * `MYR`, the only currency; filled in when omitted.
   * @example 'MYR'
   */
  currency: typeof currency;
  /**
   * Your payout reference: 1 to 100 characters of a-z, A-Z, 0-9. Unique across your deposits
   * and withdrawals (use a prefix such as `PAYOUT`): `withdrawals.recover` relies on it.
   * @example 'PAYOUT7781'
   */
  reference_id: typeof referenceIdSchema;
  /**
   * Code of a supported bank or e-wallet (2 to 32 letters, digits or `_`); the service answers
   * `INVALID_BANK_CODE` for one it does not support.
   * @example 'PBBEMYKL'
   */
  bank_code: typeof bankCode;
  /**
   * Beneficiary account number: 4 to 64 digits, letters or hyphens, no spaces. Never shown by
   * the SDK in clear: errors, logs and results carry it masked (`****6789`).
   * @example '5140123456789'
   */
  account_number: typeof accountNumber;
  /**
   * The account holder's name, as the bank has it (the payout fails otherwise); not blank.
   * @example 'Tan Wei Ming'
   */
  account_name: typeof accountName;
  /**
   * `BANK`, the only method for MYR; filled in when omitted.
   * @example 'BANK'
   */
  method: typeof method;
};

/** Client-side rules for `POST /payment/withdraw`; the {@link WithdrawalCreateParams} type is derived from it. */
export const withdrawalCreateParamsSchema: z.ZodMiniObject<WithdrawalCreateShape, z.core.$strip> = z.object({
  amount: withdrawalAmount,
  currency,
  reference_id: referenceIdSchema,
  bank_code: bankCode,
  account_number: accountNumber,
  account_name: accountName,
  // Filled in by the resource when omitted: zod's `_default` would cost bundle size.
  method,
});

/**
 * Body of `POST /payment/withdraw`. `currency` and `method` are filled in by the SDK
 * when omitted (`MYR`, `BANK`). Every field's rule shows on hover; all are checked before
 * anything is sent (`InvalidRequestError` naming the field).
 *
 * @example
 * ```ts
 * const params: WithdrawalCreateParams = {
 *   amount: '250.00',
 *   reference_id: 'PAYOUT7781',
 *   bank_code: 'PBBEMYKL',
 *   account_number: '5140123456789',
 *   account_name: 'Tan Wei Ming',
 * };
 * ```
 */
export type WithdrawalCreateParams = z.input<typeof withdrawalCreateParamsSchema>;

/**
 * A withdrawal as `withdrawals.create` returns it. The spec does not show the service's answer,
 * so only what the SDK can vouch for is always present: `reference_id` (an answer without it,
 * or with another, is an `InvalidResponseError`: the payout may have been made), `amount`,
 * `currency`, `bank_code` and the masked `account_number` (`bank_code` as sent; the others the
 * request's when the service leaves them out; an answer whose `amount` or `currency` differs
 * from the request is an `InvalidResponseError`); the rest when the service sends it. Unknown fields are
 * kept, every `account_number` among them masked. The outcome arrives by callback.
 */
export interface Withdrawal {
  /**
   * The service's id for the withdrawal, only when its answer has one: the spec does not show
   * that answer, so a deployment may leave it out (the callback always carries it, signed). Key
   * your payout on `reference_id`, which is always present.
   */
  payment_id?: string | undefined;
  /** Alternative id name some deployments use. */
  withdrawal_id?: string | undefined;
  /** Your reference, the one you sent. Always present. */
  reference_id: string;
  /**
   * The status the service reported, when it reported one (`PROCESSING` at first; the final
   * one comes by callback). A status the spec does not list passes through as a string.
   * @example 'PROCESSING'
   */
  status?: PaymentStatusValue | (string & {}) | undefined;
  /** Amount in MYR, as a number (`250`); the amount you sent. Always present. */
  amount: number;
  /** `MYR`. Always present. */
  currency: string;
  /** Beneficiary bank or e-wallet code. Always present. */
  bank_code: string;
  /**
   * The beneficiary account, masked: asterisks and the last 4 characters. Always present.
   * @example '****6789'
   */
  account_number: string;
  /** ISO 8601 creation time, when the service sends it. */
  created_at?: string | undefined;
  [extra: string]: unknown;
}

/** Tolerant schema for the withdrawal `data` object. */
export const withdrawalSchema = z.looseObject({
  payment_id: z.optional(z.string()),
  withdrawal_id: z.optional(z.string()),
  // Required: an answer that does not name this payout may be another request's, so the payout's outcome stays unknown.
  reference_id: z.string(),
  status: z.optional(z.string()),
  amount: z.optional(amountFromWire),
});

/**
 * Asterisks and the last 4 characters, as the service masks it in callbacks. Applied to
 * results too (every `account_number`, at any depth), so a full account number never sits in
 * an object the SDK returns.
 */
export { maskAccountNumber } from '../core/redact.js';
