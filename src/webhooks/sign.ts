/**
 * Produce callbacks signed exactly as the service signs them, for merchants' unit tests.
 * Uses the project's one signing implementation (`signing-scheme.ts`). Lives on the webhooks side,
 * not in `myr-gateway/testing`, so that signing a test callback never loads msw (under Deno a
 * script that imports msw never exits; under Bun msw does not intercept).
 *
 * @module
 */
import { signCallbackFields, type SignedCallbackFields } from './signing-scheme.js';

/**
 * Body of a callback, as the spec lists it. `bank_code` and `account_number` (masked)
 * appear on withdrawals only; `metadata` never appears.
 */
export interface CallbackBody extends SignedCallbackFields {
  /** `DEPOSIT` or `WITHDRAWAL` (not signed). */
  transaction_type: 'DEPOSIT' | 'WITHDRAWAL';
  /** The gateway's transaction reference; set on SUCCESS, FAILED and REFUNDED (not signed in callbacks). */
  gateway_reference: string | null;
  /** Withdrawals only (not signed). */
  bank_code?: string;
  /** Withdrawals only, masked (not signed). */
  account_number?: string;
  /** ISO 8601 creation time. */
  created_at: string;
  /** HMAC-SHA256 of the signed fields, 64 lowercase hex. */
  signature: string;
}

/**
 * Fields of a callback to sign. Only the payment's identity, amount and status are
 * required; everything else has a default.
 */
export interface SignCallbackInput {
  /** The payment or withdrawal id. */
  payment_id: string;
  /** The merchant's reference. */
  reference_id: string;
  /** Amount in MYR. */
  amount: number;
  /** Terminal status (`SUCCESS`, `FAILED`, …). */
  status: string;
  /** @default crypto.randomUUID() */
  webhook_id?: string;
  /** @default 'MYR' */
  currency?: string;
  /** @default 'DEPOSIT' */
  transaction_type?: 'DEPOSIT' | 'WITHDRAWAL';
  /** @default null */
  gateway_reference?: string | null;
  /** Withdrawals only; left out when not given. */
  bank_code?: string;
  /** Withdrawals only, already masked (e.g. `****6789`); left out when not given. */
  account_number?: string;
  /** @default the timestamp for SUCCESS, else null */
  completed_at?: string | null;
  /** @default the timestamp */
  created_at?: string;
  /** @default new Date().toISOString() */
  timestamp?: string;
}

/** A signed callback, ready to hand to a verifier or to POST to a handler. */
export interface SignedCallback {
  /** The body object, `signature` included. */
  body: CallbackBody;
  /** The spec's callback headers: Content-Type, X-Webhook-Signature, X-Webhook-ID, X-Webhook-Timestamp, X-Payment-ID. */
  headers: Record<string, string>;
  /** `JSON.stringify(body)`, the bytes the service would send. */
  rawBody: string;
}

/**
 * Builds a callback signed with the key derived from `apiKey`, as the service would send it.
 *
 * @example
 * ```ts
 * import { signCallback } from 'myr-gateway/webhooks'; // also exported by myr-gateway/testing
 *
 * const { body, headers, rawBody } = await signCallback('sk_test_mock_api_key_0001', {
 *   payment_id: 'PAY_123',
 *   reference_id: 'ORDER1001',
 *   amount: 120.5,
 *   status: 'SUCCESS',
 * });
 * const response = await app.request('/webhooks/myr', { method: 'POST', headers, body: rawBody });
 * ```
 */
export async function signCallback(apiKey: string, fields: SignCallbackInput): Promise<SignedCallback> {
  const timestamp = fields.timestamp ?? new Date().toISOString();
  const unsigned: Omit<CallbackBody, 'signature'> = {
    webhook_id: fields.webhook_id ?? globalThis.crypto.randomUUID(),
    payment_id: fields.payment_id,
    reference_id: fields.reference_id,
    amount: fields.amount,
    currency: fields.currency ?? 'MYR',
    status: fields.status,
    transaction_type: fields.transaction_type ?? 'DEPOSIT',
    gateway_reference: fields.gateway_reference ?? null,
    ...(fields.bank_code === undefined ? {} : { bank_code: fields.bank_code }),
    ...(fields.account_number === undefined ? {} : { account_number: fields.account_number }),
    completed_at:
      fields.completed_at !== undefined ? fields.completed_at : fields.status === 'SUCCESS' ? timestamp : null,
    created_at: fields.created_at ?? timestamp,
    timestamp,
  };
  const signature = await signCallbackFields(apiKey, unsigned);
  const body: CallbackBody = { ...unsigned, signature };
  return { body, headers: callbackHeaders(body), rawBody: JSON.stringify(body) };
}

/**
 * The spec's headers for a callback body.
 *
 * @example
 * ```ts
 * const headers = callbackHeaders(body); // { 'Content-Type': 'application/json', 'X-Webhook-Signature': …, … }
 * ```
 */
export function callbackHeaders(
  body: Pick<CallbackBody, 'signature' | 'webhook_id' | 'timestamp' | 'payment_id'>,
): Record<string, string> {
  return {
    'Content-Type': 'application/json',
    'X-Webhook-Signature': body.signature,
    'X-Webhook-ID': body.webhook_id,
    'X-Webhook-Timestamp': body.timestamp,
    'X-Payment-ID': body.payment_id,
  };
}
