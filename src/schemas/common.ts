import { z } from 'zod';

/** The only currency the service handles. */
export const CURRENCY = 'MYR' as const;

/** Deposit limits in MYR, both inclusive. */
export const DEPOSIT_AMOUNT = { min: 5, max: 50_000 } as const;
/** Withdrawal limits in MYR, both inclusive. */
export const WITHDRAWAL_AMOUNT = { min: 50, max: 50_000 } as const;
/** Longest `reference_id` the service accepts. */
export const REFERENCE_ID_MAX_LENGTH = 100;

const TWO_DECIMALS = /^\d+(?:\.\d{1,2})?$/;

/**
 * Whether `amount` has at most two decimal places, judged on the number's own
 * shortest decimal form (what `String(n)` prints), so there is no float arithmetic:
 * 19.99 passes, 1.005 and 0.1 + 0.2 (0.30000000000000004) do not.
 */
export function hasAtMostTwoDecimals(amount: number): boolean {
  return Number.isFinite(amount) && TWO_DECIMALS.test(String(amount));
}

/** `reference_id`: 1 to 100 characters of a-z, A-Z, 0-9. */
export const referenceIdSchema = z
  .string({ error: 'reference_id must be a string' })
  .min(1, { error: 'reference_id must not be empty' })
  .max(REFERENCE_ID_MAX_LENGTH, { error: `reference_id must be at most ${REFERENCE_ID_MAX_LENGTH} characters` })
  .regex(/^[A-Za-z0-9]+$/, { error: 'reference_id may contain only a-z, A-Z and 0-9 (no spaces, hyphens or other characters)' });

/** Amount schema for a range, with the two-decimals rule. */
export function amountSchema(range: { min: number; max: number }, kind: string) {
  return z
    .number({ error: 'amount must be a number' })
    .refine((n) => Number.isFinite(n), { error: 'amount must be a finite number' })
    .refine((n) => n >= range.min && n <= range.max, {
      error: `${kind} amount must be between ${range.min} and ${range.max} MYR inclusive`,
    })
    .refine(hasAtMostTwoDecimals, { error: 'amount must have at most 2 decimal places' });
}

/** `https://` URL. Loopback http is not accepted here: the service rejects it in production. */
export const httpsUrlSchema = (field: string) =>
  z
    .string({ error: `${field} must be a string` })
    .refine(
      (value) => {
        try {
          return new URL(value).protocol === 'https:';
        } catch {
          return false;
        }
      },
      { error: `${field} must be an absolute https:// URL` },
    );

/** ISO 8601 timestamp as the service sends it; kept as a string. */
export const isoTimestamp = z.string();

/** Success envelope `{ status: 'success', data }`. */
export function successEnvelope<T extends z.ZodType>(data: T) {
  return z.object({ status: z.literal('success'), data });
}

/** An amount as the service sends it: a JSON number, or a numeric string (tolerated, see A13). */
export const amountFromWire = z.union([z.number(), z.string().regex(/^\d+(?:\.\d+)?$/).transform(Number)]);
