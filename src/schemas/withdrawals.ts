import { z } from 'zod';
import { amountFromWire, amountSchema, CURRENCY, referenceIdSchema, WITHDRAWAL_AMOUNT } from './common.js';

/**
 * Body of `POST /payment/withdraw`. `currency` and `method` are filled in by the SDK
 * when omitted (`MYR`, `BANK`).
 *
 * @example
 * ```ts
 * const params: WithdrawalCreateParams = {
 *   amount: 250,
 *   reference_id: 'PAYOUT7781',
 *   bank_code: 'PBBEMYKL',
 *   account_number: '5140123456789',
 *   account_name: 'Tan Wei Ming',
 * };
 * ```
 */
export interface WithdrawalCreateParams {
  /** Amount in MYR: 50.00 to 50,000.00 inclusive, at most 2 decimal places. */
  amount: number;
  /** Always `MYR`. */
  currency?: typeof CURRENCY;
  /** Your unique payout reference: 1 to 100 characters of a-z, A-Z, 0-9. */
  reference_id: string;
  /** Code of a supported bank or e-wallet; the service answers INVALID_BANK_CODE otherwise. */
  bank_code: string;
  /** Beneficiary account number. Never echoed by the SDK in errors or logs. */
  account_number: string;
  /** Must match the bank account holder's name. */
  account_name: string;
  /** Always `BANK` for MYR. */
  method?: 'BANK';
}

/** Client-side rules for a withdrawal request. */
export const withdrawalCreateParamsSchema = z.object({
  amount: amountSchema(WITHDRAWAL_AMOUNT, 'withdrawal'),
  currency: z.literal(CURRENCY, { error: 'currency must be "MYR"' }).default(CURRENCY),
  reference_id: referenceIdSchema,
  bank_code: z
    .string({ error: 'bank_code must be a string' })
    .regex(/^[A-Za-z0-9_]{2,32}$/, { error: 'bank_code must be a bank or e-wallet code (letters and digits)' }),
  account_number: z
    .string({ error: 'account_number must be a string' })
    .regex(/^[0-9A-Za-z-]{4,64}$/, {
      error: 'account_number must be 4 to 64 digits or letters (no spaces)',
    }),
  account_name: z
    .string({ error: 'account_name must be a string' })
    .refine((s) => s.trim().length > 0, { error: 'account_name must not be empty' }),
  method: z.literal('BANK', { error: 'method must be "BANK" for MYR withdrawals' }).default('BANK'),
});

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
  reference_id: string;
  status?: string | undefined;
  amount?: number | undefined;
  currency?: string | undefined;
  bank_code?: string | undefined;
  /** Masked by the service (asterisks and the last 4 digits). */
  account_number?: string | undefined;
  created_at?: string | undefined;
  [extra: string]: unknown;
}

/** Tolerant schema for the withdrawal `data` object. */
export const withdrawalSchema = z.looseObject({
  payment_id: z.string().optional(),
  withdrawal_id: z.string().optional(),
  reference_id: z.string().optional(),
  status: z.string().optional(),
  amount: amountFromWire.optional(),
});

/**
 * Asterisks and the last 4 characters, as the service masks it in callbacks. Applied to
 * results too, so a full account number never sits in an object the SDK returns.
 */
export function maskAccountNumber(accountNumber: string): string {
  if (/^\*+.{0,4}$/.test(accountNumber)) return accountNumber;
  return `****${accountNumber.slice(-4)}`;
}
