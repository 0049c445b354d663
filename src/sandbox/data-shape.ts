/**
 * The shape of a `--data` file, checked field by field before anything in it is used. The
 * file is input, not state: it may be hand-edited, truncated or planted, and its values
 * become map keys, URLs and dashboard rows. Every record, token and delivery must be exactly
 * what the sandbox writes (no missing and no extra field), and no object anywhere may carry a
 * `__proto__` key, which `Object.assign` or a `for…in` copy would turn into a prototype.
 *
 * @module
 */
import { PAYMENT_METHODS } from '../schemas/payments.js';
import { PAYMENT_STATUSES } from '../schemas/statuses.js';

/** Why a value does not fit, or undefined when it does. `at` names the value (`records[2].amount`). */
type Check = (value: unknown, at: string) => string | undefined;

const quoted = (value: unknown) =>
  typeof value === 'string'
    ? JSON.stringify(value)
    : Array.isArray(value)
      ? 'a list'
      : typeof value === 'object' && value !== null
        ? 'an object'
        : String(value);
const must =
  (ok: (value: unknown) => boolean, what: string): Check =>
  (value, at) =>
    ok(value) ? undefined : `${at} is ${value === undefined ? 'missing' : quoted(value)}, expected ${what}`;

const text = must((v) => typeof v === 'string', 'a string');
const id = must((v) => typeof v === 'string' && v.length > 0 && v.length <= 200, 'an id (1 to 200 characters)');
const time = must((v) => typeof v === 'string' && !Number.isNaN(Date.parse(v)), 'an ISO 8601 time');
const millis = must((v) => typeof v === 'number' && Number.isSafeInteger(v) && v >= 0, 'a time in milliseconds');
const amount = must((v) => typeof v === 'number' && Number.isFinite(v) && v > 0, 'a positive amount in MYR');
const flag = must((v) => typeof v === 'boolean', 'true or false');
const oneOf = (values: readonly string[]): Check =>
  must((v) => typeof v === 'string' && values.includes(v), `one of ${values.join(', ')}`);
const orNull =
  (check: Check): Check =>
  (value, at) =>
    value === null ? undefined : check(value, at);
const optional =
  (check: Check): Check =>
  (value, at) =>
    value === undefined ? undefined : check(value, at);
const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' &&
  value !== null &&
  !Array.isArray(value) &&
  Object.getPrototypeOf(value) === Object.prototype;
const object = must(isObject, 'an object');

/** `fields` in a null-prototype object: a field name is looked up as own data, never inherited. */
type Fields = Readonly<Record<string, Check>>;
const fields = (spec: Record<string, Check>): Fields =>
  Object.freeze(Object.assign(Object.create(null) as Record<string, Check>, spec)); // a null-prototype object, filled with spec at once

/** Exactly `spec`'s fields, each passing its check. */
function shape(spec: Fields, what: string): Check {
  return (value, at) => {
    if (!isObject(value)) return `${at} is not an object (${value === null ? 'null' : typeof value}), expected ${what}`;
    for (const key of Object.keys(value)) {
      if (!(key in spec)) return `${at}.${key} is not a field of ${what}`;
    }
    for (const [key, check] of Object.entries(spec)) {
      const problem = check(value[key], `${at}.${key}`);
      if (problem) return problem;
    }
    return undefined;
  };
}

const list =
  (item: Check): Check =>
  (value, at) => {
    if (!Array.isArray(value)) return `${at} is not a list`;
    for (const [i, entry] of value.entries()) {
      const problem = item(entry, `${at}[${i}]`);
      if (problem) return problem;
    }
    return undefined;
  };

const recordCommon = {
  payment_id: id,
  merchantId: id,
  reference_id: id,
  amount,
  currency: oneOf(['MYR']),
  status: oneOf(PAYMENT_STATUSES),
  gateway_reference: orNull(text),
  created_at: time,
  completed_at: orNull(time),
};
const deposit = shape(
  fields({
    ...recordCommon,
    kind: oneOf(['DEPOSIT']),
    payment_method: oneOf(PAYMENT_METHODS),
    customer_name: text,
    customer_phone: text,
    callback_url: orNull(text),
    redirect_url: orNull(text),
    metadata: orNull(object),
    payment_url: text,
    gateway_redirect_url: text,
    qr_data_string: orNull(text),
    expires_at: time,
  }),
  'a payment',
);
const withdrawal = shape(
  fields({
    ...recordCommon,
    kind: oneOf(['WITHDRAWAL']),
    method: oneOf(['BANK']),
    bank_code: id,
    account_number: id,
    account_name: text,
  }),
  'a withdrawal',
);
const KINDS = ['DEPOSIT', 'WITHDRAWAL'];
const record: Check = (value, at) => {
  if (!isObject(value))
    return `${at} is not an object (${value === null ? 'null' : typeof value}), expected a payment or withdrawal`;
  if (value.kind === 'DEPOSIT') return deposit(value, at);
  if (value.kind === 'WITHDRAWAL') return withdrawal(value, at);
  return oneOf(KINDS)(value.kind, `${at}.kind`);
};

const token = shape(fields({ token: id, merchantId: id, expiresAt: millis, revoked: flag }), 'an access token');
const attempt = shape(
  fields({
    status: optional(
      must((v) => typeof v === 'number' && Number.isInteger(v) && v >= 100 && v <= 599, 'an HTTP status'),
    ),
    error: optional(text),
    at: millis,
    duplicate: optional(flag),
    durationMs: optional(millis),
    responseBody: optional(text),
  }),
  'a delivery attempt',
);
const delivery = shape(
  fields({
    webhook_id: id,
    payment_id: id,
    reference_id: id,
    transaction_type: oneOf(KINDS),
    status: text,
    url: orNull(text),
    started_at: millis,
    attempts: list(attempt),
    state: oneOf(['sending', 'delivered', 'failed', 'no-url']),
    body: object,
  }),
  'a callback delivery',
);

const sandboxFile = shape(
  fields({
    version: must((v) => v === 1, '1'),
    records: list(record),
    tokens: list(token),
    deliveries: list(delivery),
  }),
  'a sandbox data file',
);

/** The first `__proto__` key anywhere in `value`, by its path. */
function protoKey(value: unknown, at: string): string | undefined {
  if (typeof value !== 'object' || value === null) return undefined;
  for (const [key, inner] of Object.entries(value)) {
    const path = Array.isArray(value) ? `${at}[${key}]` : `${at}.${key}`;
    if (key === '__proto__') return `${path} is a key no data file may hold`;
    const found = protoKey(inner, path);
    if (found) return found;
  }
  return undefined;
}

/** A field whose value must be unique across a list (`payment_id` of records, `token` of tokens). */
function duplicate(entries: unknown[], key: string, at: string): string | undefined {
  const seen = new Set<unknown>();
  for (const [i, entry] of entries.entries()) {
    const value = (entry as Record<string, unknown>)[key]; // sandboxFile checked that every entry is an object
    if (seen.has(value)) return `${at}[${i}].${key} ${quoted(value)} appears twice`;
    seen.add(value);
  }
  return undefined;
}

/**
 * What is wrong with a parsed `--data` file, or undefined when it is a sandbox data file.
 * The answer names the first problem by its path (`records[0].payment_method is "__proto__", …`).
 */
export function dataFileProblem(parsed: unknown): string | undefined {
  if (!isObject(parsed) || parsed.version !== 1)
    return 'it is not a sandbox data file (version 1 with records, tokens, deliveries)';
  const problem = sandboxFile(parsed, 'file') ?? protoKey(parsed, 'file');
  if (problem) return problem.replace(/^file\./, '');
  const file = parsed as { records: unknown[]; tokens: unknown[]; deliveries: unknown[] }; // sandboxFile checked the shape just above
  return (
    duplicate(file.records, 'payment_id', 'records') ??
    duplicate(file.tokens, 'token', 'tokens') ??
    duplicate(file.deliveries, 'webhook_id', 'deliveries')
  );
}
