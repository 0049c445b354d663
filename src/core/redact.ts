/**
 * Secrets taken out of text the service sent back before it reaches an error message or a
 * result: the api key of the client, the access token of the attempt (which may come from a
 * shared store this instance never fetched into), and the account number of a withdrawal
 * (masked as the service masks it, `****6789`).
 *
 * @module
 */

/** Returns `text` with the secrets it knows replaced by `[redacted]`. */
export type Redact = (text: string) => string;

const REDACTED = '[redacted]';

/** A {@link Redact} for one secret (the client's api key). */
export function redactSecret(secret: string): Redact {
  // An empty secret hides nothing; split('') would put the marker between every character.
  if (secret === '') return (text) => text;
  return (text) => text.split(secret).join(REDACTED);
}

/** `redact`, and `secret` too when there is one (the access token an attempt was sent with). */
export function alsoRedact(redact: Redact, secret: string | undefined): Redact {
  return bothRedact(redact, secret === undefined ? undefined : redactSecret(secret));
}

/**
 * Asterisks and the last 4 characters, as the service masks it in callbacks.
 *
 * @example
 * ```ts
 * maskAccountNumber('5140123456789'); // '****6789'
 * ```
 */
export function maskAccountNumber(accountNumber: string): string {
  if (/^\*+.{0,4}$/.test(accountNumber)) return accountNumber;
  return `****${accountNumber.slice(-4)}`;
}

/** What may stand between the characters of an account number written for people: spaces, dashes, dots, slashes. */
const SEPARATOR = String.raw`[\s./-]{0,3}`;

/**
 * A {@link Redact} that masks `accountNumber` wherever its characters appear in that order,
 * with or without separators between them (`5140 1234 56789`, `5140-1234-56789`), whatever
 * their case: the request's own account number in a message the service sent back.
 *
 * @example
 * ```ts
 * accountNumberRedactor('5140123456789')('bank rejected account 5140-1234-56789'); // 'bank rejected account ****6789'
 * ```
 */
export function accountNumberRedactor(accountNumber: string): Redact {
  const masked = maskAccountNumber(accountNumber);
  const chars = accountNumber.replace(/[^0-9A-Za-z]/g, '');
  // The schema admits 4 to 64 letters, digits and dashes: nothing here is a pattern character.
  if (chars.length < 4) return (text) => text.split(accountNumber).join(masked);
  const pattern = new RegExp(chars.split('').join(SEPARATOR), 'gi');
  return (text) => text.replace(pattern, masked);
}

/** `first`, then `second` when there is one. */
export function bothRedact(first: Redact, second: Redact | undefined): Redact {
  return second === undefined ? first : (text) => second(first(text));
}

/**
 * Whether `value`, a JSON number, is `accountNumber` read as one: all digits, leading zeros
 * dropped, and past 2^53 rounded the same way JSON.parse rounds it.
 */
function isAccountAsNumber(value: number, accountNumber: string | undefined): boolean {
  return accountNumber !== undefined && /^\d+$/.test(accountNumber) && Number(accountNumber) === value;
}

/**
 * A copy of an answer with every `account_number` field masked, at any depth, `accountNumber`
 * (the one sent) masked wherever it appears as a JSON number, under any key, and `redact`
 * applied to every other string but the merchant's own `reference_id`: nested beneficiary
 * records included. Applied before the answer is parsed, so the result is typed by its schema.
 *
 * @example
 * ```ts
 * maskAccountNumbers({ beneficiary: { account: 5140123456789 } }, accountNumberRedactor('5140123456789'), '5140123456789');
 * // { beneficiary: { account: '****6789' } }
 * ```
 */
export function maskAccountNumbers(value: unknown, redact: Redact, accountNumber?: string): unknown {
  const mask = (v: unknown, key: string | undefined): unknown => {
    // An account number sent as a JSON number is masked too, and kept as the masked text.
    if (key === 'account_number' && (typeof v === 'string' || typeof v === 'number'))
      return maskAccountNumber(String(v));
    if (typeof v === 'number') return isAccountAsNumber(v, accountNumber) ? maskAccountNumber(accountNumber ?? '') : v;
    if (typeof v === 'string') return key === 'reference_id' ? v : redact(v);
    // The elements of an array under a key are that key's values (a list of account numbers).
    if (Array.isArray(v)) return v.map((entry) => mask(entry, key));
    if (v === null || typeof v !== 'object') return v;
    return Object.fromEntries(Object.entries(v).map(([k, entry]) => [k, mask(entry, k)]));
  };
  return mask(value, undefined);
}
