/**
 * The server's own checks of request bodies, written from the spec's tables rather than
 * from the client's schemas, so that a client bug shows up as a rejected request.
 * Only constant lists are shared with the client.
 *
 * @module
 */
import {
  PROVIDER_CHANNELS_GROUP_A,
  PROVIDER_CHANNELS_GROUP_B,
  WITHDRAWAL_EWALLET_CODES,
} from '../schemas/bank-codes.js';

/** A rejection: HTTP status, error code and a message naming the field. */
export interface Rejection {
  status: number;
  code: string;
  message: string;
}

const PROVIDER_CHANNELS: ReadonlySet<string> = new Set([...PROVIDER_CHANNELS_GROUP_A, ...PROVIDER_CHANNELS_GROUP_B]);
const WITHDRAWAL_BANK_CODES: ReadonlySet<string> = new Set([...PROVIDER_CHANNELS, ...WITHDRAWAL_EWALLET_CODES]);
const DEPOSIT_METHODS = ['QR_PAYMENT', 'BANK_TRANSFER', 'MOBILE_WALLET'] as const;
const ALNUM = /^[A-Za-z0-9]+$/;
/** Shortest decimal form with at most two decimals (A15). Exponent forms (1e-7, 1e21) fail. */
const TWO_DECIMALS = /^\d+(\.\d{1,2})?$/;

/** Outcome of a body check. */
export type Checked<T> = { ok: true; value: T } | { ok: false; error: Rejection };

const fail = (error: Rejection): { ok: false; error: Rejection } => ({ ok: false, error });

const reject = (status: number, code: string, message: string): Rejection => ({ status, code, message });
const invalid = (message: string): Rejection => reject(400, 'VALIDATION_ERROR', message);

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function nonEmptyString(value: unknown): value is string {
  return typeof value === 'string' && value.trim().length > 0;
}

function checkReference(value: unknown): Rejection | undefined {
  if (typeof value !== 'string' || value.length === 0) return invalid('reference_id is required');
  if (value.length > 100) return invalid('reference_id must be at most 100 characters');
  if (!ALNUM.test(value)) return invalid('reference_id may contain only a-z, A-Z and 0-9');
  return undefined;
}

function checkAmount(value: unknown, min: number, max: number, kind: string): Rejection | undefined {
  if (value === undefined || value === null) return invalid('amount is required');
  if (typeof value !== 'number' || !Number.isFinite(value)) return invalid('amount must be a number');
  if (value < min || value > max) {
    return reject(400, 'INVALID_AMOUNT', `${kind} amount must be between ${min} and ${max} MYR`);
  }
  if (!TWO_DECIMALS.test(String(value)))
    return reject(400, 'INVALID_AMOUNT', 'amount must have at most 2 decimal places');
  return undefined;
}

function checkUrl(field: string, value: unknown, production: boolean): Rejection | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== 'string') return invalid(`${field} must be a string`);
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return invalid(`${field} must be an absolute URL`);
  }
  if (url.protocol === 'https:') return undefined;
  if (url.protocol === 'http:' && !production) return undefined;
  // A3: 422 with VALIDATION_ERROR, the message names the field.
  return reject(422, 'VALIDATION_ERROR', `${field} must use https:// in production`);
}

/** A validated deposit request. */
export interface DepositRequest {
  amount: number;
  reference_id: string;
  customer_name: string;
  customer_phone: string;
  payment_method: (typeof DEPOSIT_METHODS)[number];
  callback_url: string | null;
  redirect_url: string | null;
  metadata: Record<string, unknown> | null;
}

/**
 * Checks a `POST /payment/request` body against rules 1–5 of the spec, in this order:
 * body shape, reference_id, amount, currency, customer fields, payment_method, URLs,
 * metadata, provider channel.
 */
export function validateDeposit(body: unknown, production: boolean): Checked<DepositRequest> {
  if (!isObject(body)) return fail(invalid('request body must be a JSON object'));
  const refError = checkReference(body.reference_id);
  if (refError) return fail(refError);
  const amountError = checkAmount(body.amount, 5, 50_000, 'deposit');
  if (amountError) return fail(amountError);
  if (body.currency !== undefined && body.currency !== 'MYR') return fail(invalid('currency must be MYR'));
  if (!nonEmptyString(body.customer_name)) return fail(invalid('customer_name is required'));
  const phone = body.customer_phone;
  if (typeof phone !== 'string' || phone.length < 1 || phone.length > 50) {
    return fail(invalid('customer_phone must be 1 to 50 characters'));
  }
  if (phone.startsWith('+')) return fail(invalid('customer_phone must not start with "+"'));
  const method = body.payment_method;
  if (typeof method !== 'string' || !(DEPOSIT_METHODS as readonly string[]).includes(method)) {
    // widened to search it with any string
    return fail(invalid(`payment_method must be one of ${DEPOSIT_METHODS.join(', ')}`));
  }
  const urlError =
    checkUrl('callback_url', body.callback_url, production) ?? checkUrl('redirect_url', body.redirect_url, production);
  if (urlError) return fail(urlError);
  const metadata = body.metadata;
  if (metadata !== undefined && metadata !== null && !isObject(metadata)) {
    return fail(invalid('metadata must be an object'));
  }
  if (method === 'BANK_TRANSFER') {
    const channel = isObject(metadata) ? metadata.provider_channel_id : undefined;
    if (channel === undefined || channel === null || channel === '') {
      return fail(reject(400, 'MISSING_PROVIDER_CHANNEL', 'BANK_TRANSFER requires metadata.provider_channel_id'));
    }
    if (typeof channel !== 'string' || !PROVIDER_CHANNELS.has(channel)) {
      return fail(
        reject(400, 'INVALID_PROVIDER_CHANNEL', 'metadata.provider_channel_id is not in the allowed bank lists'),
      );
    }
  }
  return {
    ok: true,
    value: {
      // The field checks above returned early unless these are a number and a string.
      amount: body.amount as number,
      reference_id: body.reference_id as string, // see above
      customer_name: body.customer_name,
      customer_phone: phone,
      payment_method: method as DepositRequest['payment_method'], // one of DEPOSIT_METHODS, checked above
      callback_url: typeof body.callback_url === 'string' ? body.callback_url : null,
      redirect_url: typeof body.redirect_url === 'string' ? body.redirect_url : null,
      metadata: isObject(metadata) ? metadata : null,
    },
  };
}

/** A validated withdrawal request. */
export interface WithdrawalRequest {
  amount: number;
  reference_id: string;
  bank_code: string;
  account_number: string;
  account_name: string;
}

/**
 * Checks a `POST /payment/withdraw` body: reference_id, amount (50–50,000, two decimals),
 * currency `MYR` and method `BANK` (both required), account fields, then the bank code.
 */
export function validateWithdrawal(body: unknown): Checked<WithdrawalRequest> {
  if (!isObject(body)) return fail(invalid('request body must be a JSON object'));
  const refError = checkReference(body.reference_id);
  if (refError) return fail(refError);
  const amountError = checkAmount(body.amount, 50, 50_000, 'withdrawal');
  if (amountError) return fail(amountError);
  if (body.currency !== 'MYR') return fail(invalid('currency must be MYR'));
  if (body.method !== 'BANK') return fail(invalid('method must be BANK'));
  if (!nonEmptyString(body.account_number)) return fail(invalid('account_number is required'));
  if (!nonEmptyString(body.account_name)) return fail(invalid('account_name is required'));
  if (typeof body.bank_code !== 'string' || body.bank_code.length === 0) return fail(invalid('bank_code is required'));
  if (!WITHDRAWAL_BANK_CODES.has(body.bank_code)) {
    return fail(reject(400, 'INVALID_BANK_CODE', 'bank_code is not a supported bank or e-wallet'));
  }
  return {
    ok: true,
    value: {
      // The field checks above returned early unless these are a number and a string.
      amount: body.amount as number,
      reference_id: body.reference_id as string, // see above
      bank_code: body.bank_code,
      account_number: body.account_number,
      account_name: body.account_name,
    },
  };
}
