/**
 * Public types of what the mock records: requests it saw, and the payments and withdrawals it stores.
 *
 * @module
 */
import type { Endpoint } from './options.js';

/**
 * One request the mock received, in arrival order.
 *
 * @example
 * ```ts
 * const [first] = mock.requests;
 * expect(first?.endpoint).toBe('auth');
 * expect(first?.headers['content-type']).toContain('application/json');
 * ```
 */
export interface RecordedRequest {
  /** Which endpoint it hit; `'unknown'` for any other path or method under the base URL. */
  endpoint: Endpoint | 'unknown';
  /** HTTP method, upper case. */
  method: string;
  /** Path relative to the base URL, with the query string, e.g. `/payment/status/PAY_1`. */
  path: string;
  /** Request headers, names in lower case. */
  headers: Record<string, string>;
  /** Parsed JSON body; the raw text when it is not JSON; `undefined` when empty. */
  body: unknown;
  /** HTTP status of the answer; `0` for a network error (and while still being answered). */
  status: number;
  /** Arrival time on the mock's clock (ms). */
  at: number;
}

/** Fields every stored payment or withdrawal has. */
export interface MockRecordCommon {
  /** The service's id (`PAY_…` for deposits, `WD_…` for withdrawals). */
  payment_id: string;
  /** The merchant that created it. */
  merchantId: string;
  /** The merchant's reference, unique per merchant across deposits and withdrawals. */
  reference_id: string;
  /** Amount in MYR. */
  amount: number;
  /** Always `MYR`. */
  currency: 'MYR';
  /** Current status (`PROCESSING` until completed or expired). */
  status: string;
  /** The gateway's transaction reference; set on SUCCESS, FAILED and REFUNDED (not signed in callbacks). */
  gateway_reference: string | null;
  /** ISO 8601 creation time. */
  created_at: string;
  /** ISO 8601 time of a SUCCESS, else null. */
  completed_at: string | null;
}

/**
 * A stored deposit, as the mock holds it.
 *
 * @example
 * ```ts
 * const payment = mock.getPayment('ORDER1001');
 * expect(payment?.metadata).toEqual({ provider_channel_id: 'MB2U0227' });
 * ```
 */
export interface MockPaymentRecord extends MockRecordCommon {
  /** Discriminant: a deposit. */
  kind: 'DEPOSIT';
  /** The deposit method. */
  payment_method: 'QR_PAYMENT' | 'BANK_TRANSFER' | 'MOBILE_WALLET';
  /** As sent. */
  customer_name: string;
  /** As sent. */
  customer_phone: string;
  /** The payment's own `callback_url`, when one was sent. */
  callback_url: string | null;
  /** Where the customer returns afterwards, when one was sent. */
  redirect_url: string | null;
  /** Stored exactly as sent; never put in callbacks. */
  metadata: Record<string, unknown> | null;
  /** The gateway's payment page (QR_PAYMENT customers go here). */
  payment_url: string;
  /** The bank or wallet page (`gateway.redirect_url`). */
  gateway_redirect_url: string;
  /** `gateway.qr_data_string` as answered: null from the test mock, a QR payload in the sandbox. */
  qr_data_string: string | null;
  /** ISO 8601; unpaid after this, the payment reads as EXPIRED. */
  expires_at: string;
}

/**
 * A stored withdrawal, as the mock holds it. `account_number` is the full number as sent;
 * answers and callbacks carry it masked.
 *
 * @example
 * ```ts
 * expect(mock.getWithdrawal('PAYOUT1')?.status).toBe('PROCESSING');
 * ```
 */
export interface MockWithdrawalRecord extends MockRecordCommon {
  /** Discriminant: a withdrawal. */
  kind: 'WITHDRAWAL';
  /** Always `BANK`. */
  method: 'BANK';
  /** Beneficiary bank or e-wallet code. */
  bank_code: string;
  /** The full account number as sent (answers and callbacks mask it). */
  account_number: string;
  /** Beneficiary name. */
  account_name: string;
}
