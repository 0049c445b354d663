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

/**
 * A {@link Redact} that masks `accountNumber` wherever it appears: the request's own account
 * number in a message the service sent back.
 */
export function accountNumberRedactor(accountNumber: string): Redact {
  const masked = maskAccountNumber(accountNumber);
  return (text) => text.split(accountNumber).join(masked);
}

/** `first`, then `second` when there is one. */
export function bothRedact(first: Redact, second: Redact | undefined): Redact {
  return second === undefined ? first : (text) => second(first(text));
}

/**
 * A copy of an answer with every `account_number` field masked, at any depth, and `redact`
 * applied to every other string but the merchant's own `reference_id`: nested beneficiary
 * records included. Applied before the answer is parsed, so the result is typed by its schema.
 */
export function maskAccountNumbers(value: unknown, redact: Redact, key?: string): unknown {
  // An account number sent as a JSON number is masked too, and kept as the masked text.
  if (key === 'account_number' && (typeof value === 'string' || typeof value === 'number')) return maskAccountNumber(String(value));
  if (typeof value === 'string') return key === 'reference_id' ? value : redact(value);
  // The elements of an array under a key are that key's values (a list of account numbers).
  if (Array.isArray(value)) return value.map((entry) => maskAccountNumbers(entry, redact, key));
  if (value === null || typeof value !== 'object') return value;
  return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, maskAccountNumbers(v, redact, k)]));
}
