import * as z from 'zod/mini';
import { hasUnsafeUrlCharacter, normalisedUrl } from '../core/urls.js';
import { DECIMAL_STRING, TWO_DECIMALS } from './amount.js';

/** The only currency the service handles. */
export const CURRENCY = 'MYR' as const;

/** Deposit limits in MYR, both inclusive. */
export const DEPOSIT_AMOUNT = {
  /** Smallest deposit. */
  min: 5,
  /** Largest deposit. */
  max: 50_000,
} as const;
/** Withdrawal limits in MYR, both inclusive. */
export const WITHDRAWAL_AMOUNT = {
  /** Smallest withdrawal. */
  min: 50,
  /** Largest withdrawal. */
  max: 50_000,
} as const;
/** Longest `reference_id` the service accepts. */
export const REFERENCE_ID_MAX_LENGTH = 100;

/**
 * Whether `amount` has at most two decimal places, judged on the number's own
 * shortest decimal form (what `String(n)` prints), so there is no float arithmetic:
 * 19.99 passes, 1.005 and 0.1 + 0.2 (0.30000000000000004) do not.
 *
 * @example
 * ```ts
 * hasAtMostTwoDecimals(19.99); // true
 * hasAtMostTwoDecimals(0.1 + 0.2); // false
 * ```
 */
export function hasAtMostTwoDecimals(amount: number): boolean {
  return Number.isFinite(amount) && TWO_DECIMALS.test(String(amount));
}

/**
 * What is wrong with an amount given as a number or a decimal string, or undefined when it is
 * a valid MYR amount in `range`. Judged on the decimal text (the number's shortest form), so
 * there is no float rounding: `'120.50'` and `120.5` pass, `1.005`, `'1e3'` and `NaN` do not.
 */
function amountProblem(value: unknown, range: { min: number; max: number }, kind: string): string | undefined {
  let text: string;
  if (typeof value === 'number') {
    if (!Number.isFinite(value)) return `amount must be a finite number, not ${String(value)}`;
    // Exponent forms (`1e21`, `1e-7`) are out of range, and said so below.
    text = String(value);
  } else {
    if (typeof value !== 'string' || !DECIMAL_STRING.test(value)) {
      return 'amount as a string must be a plain decimal such as "120.50" (no sign, exponent, spaces or separators)';
    }
    text = value;
  }
  const amount = Number(text);
  if (!(amount >= range.min && amount <= range.max)) {
    return `${kind} amount must be between ${range.min} and ${range.max} MYR inclusive`;
  }
  if (!TWO_DECIMALS.test(text)) {
    return 'amount must have at most 2 decimal places';
  }
  return undefined;
}

/**
 * A check with a fixed message. Length and pattern rules are written with it rather than with
 * zod's `minLength`, `maxLength`, `regex`, `enum`, `record` or `discriminatedUnion`: each of
 * those pulls its own part of zod into every merchant's bundle (about 2.4 kB min+gzip in all).
 */
export const rule = <T>(test: (value: T) => boolean, error: string) => z.refine<T>(test, { error });

/** A string that is one of `values`, typed as their union. */
export const oneOf = <const T extends string>(
  values: readonly T[],
  error: string | ((issue: { input: unknown }) => string),
) => z.custom<T>((value) => (values as readonly unknown[]).includes(value), { error });

/** `reference_id`: 1 to 100 characters of a-z, A-Z, 0-9. */
export const referenceIdSchema = z.string({ error: 'reference_id must be a string' }).check(
  rule((s: string) => s.length > 0, 'reference_id must not be empty'),
  rule(
    (s: string) => s.length <= REFERENCE_ID_MAX_LENGTH,
    `reference_id must be at most ${REFERENCE_ID_MAX_LENGTH} characters`,
  ),
  rule((s: string) => /^[A-Za-z0-9]*$/.test(s), 'reference_id may contain only a-z, A-Z and 0-9'),
);

const isNumberOrString = (value: unknown): value is number | string =>
  typeof value === 'number' || typeof value === 'string';

/**
 * An amount in MYR given as a number (`120.5`) or a decimal string (`'120.50'`), checked
 * exactly against `range` and the two-decimals rule, and output as the JSON number the
 * service requires.
 *
 * Built on `z.custom` rather than a union and a transform: zod marks a union's or a pipe's key
 * optional in projects compiled without `strictNullChecks`, which would make `amount` look
 * optional to those merchants.
 */
export function amountSchema(range: { min: number; max: number }, kind: string) {
  return z
    .custom<number | string>(isNumberOrString, {
      error: 'amount must be a number or a decimal string such as "120.50"',
    })
    .check(
      // The refusal's words are found again from the input: only a refused amount pays for it.
      z.refine((value) => amountProblem(value, range, kind) === undefined, {
        error: (issue) => amountProblem(issue.input, range, kind),
      }),
      z.overwrite((value) => Number(value)),
    );
}

/** A non-blank string (names). */
export const nonBlank = (field: string) =>
  z
    .string({ error: `${field} must be a string` })
    .check(rule((s: string) => s.trim().length > 0, `${field} must not be empty`));

/**
 * `https://` URL, without whitespace or control characters, output normalised
 * (`new URL(value).href`). Loopback http is not accepted here: the service rejects it in production.
 */
export const httpsUrlSchema = (field: string) =>
  z.string({ error: `${field} must be a string` }).check(
    // One message, the main problem: text that is no https URL at all ('not a url') is told so;
    // an https URL with a space or a control character is told that. Either way it is refused.
    rule(
      (s: string) => isHttpsUrl(s) || (hasUnsafeUrlCharacter(s) && HTTPS_PREFIX.test(s)),
      `${field} must be an absolute https:// URL`,
    ),
    rule(
      (s: string) => !hasUnsafeUrlCharacter(s) || !(isHttpsUrl(s) || HTTPS_PREFIX.test(s)),
      `${field} must not contain spaces, control or invisible characters`,
    ),
    // What is sent is what was checked: the parsed URL, not the raw text.
    z.overwrite(normalisedUrl),
  );

/** Text that means to be an https URL (whatever follows). */
const HTTPS_PREFIX = /^\s*https:\/\//i;

function isHttpsUrl(value: string): boolean {
  try {
    return new URL(value).protocol === 'https:';
  } catch {
    return false;
  }
}

/**
 * An amount as the service sends it: a JSON number, or a numeric string (tolerated, see A13),
 * output as a number. `z.custom` for the same reason as {@link amountSchema}.
 */
export const amountFromWire = z
  .custom<number>((value) => typeof value === 'number' || (typeof value === 'string' && DECIMAL_STRING.test(value)))
  .check(z.overwrite((value) => Number(value)));
