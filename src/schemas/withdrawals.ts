import * as z from 'zod/mini';
import { amountFromWire, amountSchema, CURRENCY, nonBlank, referenceIdSchema, rule, WITHDRAWAL_AMOUNT } from './common.js';

/** Client-side rules for `POST /payment/withdraw`; the {@link WithdrawalCreateParams} type is derived from it. */
export const withdrawalCreateParamsSchema = z.object({
  /** Amount in MYR: 50.00 to 50,000.00 inclusive, at most 2 decimal places; a number or a decimal string such as `'250.00'`. */
  amount: amountSchema(WITHDRAWAL_AMOUNT, 'withdrawal'),
  /** Always `MYR`; filled in when omitted. */
  currency: z.optional(z.literal(CURRENCY, { error: 'currency must be "MYR"' })),
  /** Your unique payout reference: 1 to 100 characters of a-z, A-Z, 0-9. */
  reference_id: referenceIdSchema,
  /** Code of a supported bank or e-wallet; the service answers INVALID_BANK_CODE otherwise. */
  bank_code: z
    .string({ error: 'bank_code must be a string' })
    .check(rule((s: string) => /^[A-Za-z0-9_]{2,32}$/.test(s), 'bank_code must be a bank or e-wallet code (letters and digits)')),
  /** Beneficiary account number. Never echoed by the SDK in errors, logs or results (masked). */
  account_number: z
    .string({ error: 'account_number must be a string' })
    .check(rule((s: string) => /^[0-9A-Za-z-]{4,64}$/.test(s), 'account_number must be 4 to 64 digits or letters (no spaces)')),
  /** Must match the bank account holder's name. */
  account_name: nonBlank('account_name'),
  /** Always `BANK` for MYR; filled in when omitted (by the resource: zod's `_default` would cost bundle size). */
  method: z.optional(z.literal('BANK', { error: 'method must be "BANK" for MYR withdrawals' })),
});

/**
 * Body of `POST /payment/withdraw`. `currency` and `method` are filled in by the SDK
 * when omitted (`MYR`, `BANK`).
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
 * The withdrawal as the service returns it. The spec does not show this body, so every
 * field is optional and unknown fields are kept; `reference_id` is always set (from the
 * request when the service omits it).
 */
export interface Withdrawal {
  /** The service's id for the withdrawal, when it returns one (callbacks call it `payment_id`). */
  payment_id?: string | undefined;
  /** Alternative id name some deployments use. */
  withdrawal_id?: string | undefined;
  /** Your reference. */
  reference_id: string;
  /** Status, `PROCESSING` at first. */
  status?: string | undefined;
  /** Amount in MYR. */
  amount?: number | undefined;
  /** `MYR`. */
  currency?: string | undefined;
  /** Beneficiary bank or e-wallet code. */
  bank_code?: string | undefined;
  /** Masked by the service (asterisks and the last 4 digits). */
  account_number?: string | undefined;
  /** ISO 8601 creation time. */
  created_at?: string | undefined;
  [extra: string]: unknown;
}

/** Tolerant schema for the withdrawal `data` object. */
export const withdrawalSchema = z.looseObject({
  payment_id: z.optional(z.string()),
  withdrawal_id: z.optional(z.string()),
  reference_id: z.optional(z.string()),
  status: z.optional(z.string()),
  amount: z.optional(amountFromWire),
});

/**
 * Asterisks and the last 4 characters, as the service masks it in callbacks. Applied to
 * results too (every `account_number`, at any depth), so a full account number never sits in
 * an object the SDK returns.
 */
export { maskAccountNumber } from '../core/redact.js';
