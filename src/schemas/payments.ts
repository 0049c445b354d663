import * as z from 'zod/mini';
import { amountFromWire, rule } from './common.js';
import type { PaymentMethod } from './payment-params.js';
import type { PaymentStatus, PaymentStatusValue } from './statuses.js';

export type { PaymentStatus };

export { PAYMENT_STATUSES, TERMINAL_STATUSES, type PaymentStatusValue, type TerminalStatus } from './statuses.js';

export {
  PAYMENT_METHODS,
  paymentCreateParamsSchema,
  type PaymentCreateParams,
  type PaymentMethod,
} from './payment-params.js';

/**
 * `data` of a successful `POST /payment/request`. Extra fields are kept. Only the fields
 * without which the merchant cannot go on (`payment_id`, `payment_url`) are required: the
 * payment exists once the service answered 2xx, so a missing echo field must not turn a
 * created payment into an error. The resource fills such fields from the request.
 */
const text = z.string();
const nonEmpty = z.string().check(rule((s: string) => s.length > 0, 'must not be empty'));
const optionalText = z.optional(z.string());
const nullableText = z.optional(z.nullable(z.string()));

export const paymentCreatedSchema = z.looseObject({
  payment_id: nonEmpty,
  payment_url: nonEmpty,
  status: optionalText,
  amount: z.optional(amountFromWire),
  currency: optionalText,
  reference_id: optionalText,
  expires_in: z.optional(z.custom<number>(Number.isFinite)),
  expires_at: nullableText,
  gateway: z.optional(
    z.nullable(
      z.looseObject({
        behavior: optionalText,
        redirect_url: optionalText,
        qr_data_string: nullableText,
      }),
    ),
  ),
});

/** `data` of `GET /payment/status/:identifier`. Extra fields are kept. */
export const paymentStatusSchema = z.looseObject({
  /** Payment identifier. */
  payment_id: nonEmpty,
  /** Your original reference. */
  reference_id: text,
  /** Payment amount in MYR. */
  amount: amountFromWire,
  /** Currency code, `MYR`. */
  currency: text,
  /** One of {@link PAYMENT_STATUSES}; unknown future values pass through. */
  status: text,
  /** Gateway's transaction reference; null until processed. */
  gateway_reference: nullableText,
  /** ISO 8601 creation time (the spec always sends it; tolerated when missing). */
  created_at: optionalText,
  /** ISO 8601; null if not completed. */
  completed_at: nullableText,
  /** ISO 8601; null if not set. */
  expires_at: nullableText,
});

/** Gateway data of a created payment. */
export interface PaymentGateway {
  /** Always `REDIRECT_EXTERNAL` for MYR. */
  behavior: 'REDIRECT_EXTERNAL' | (string & {});
  /** Gateway page URL (bank or wallet authorization). */
  redirect_url: string;
  /** QR payload; null in the spec's example. */
  qr_data_string?: string | null | undefined;
  [extra: string]: unknown;
}

/**
 * A created payment: the spec's `data` object, plus the URL to send the customer to. Every
 * field but `expires_in` and `expires_at` is always present (a field the service left out is
 * filled from the request: the same `reference_id` and `amount`, `MYR`, `PROCESSING`).
 */
export interface PaymentCreated {
  /** Unique payment id; begins with `PAY_`. Always present. */
  payment_id: string;
  /** Payment page URL (shows the QR for QR_PAYMENT); always `https://`. Always present. */
  payment_url: string;
  /**
   * Initial status, `PROCESSING`. Always present.
   * @example 'PROCESSING'
   */
  status: PaymentStatusValue | (string & {});
  /** Confirmed amount in MYR, as a number (`120.5`); the amount you sent. Always present. */
  amount: number;
  /** Currency code, `MYR`. Always present. */
  currency: string;
  /** Your reference, the one you sent. Always present. */
  reference_id: string;
  /** Seconds until expiry. */
  expires_in?: number | undefined;
  /** Expiry timestamp, ISO 8601. */
  expires_at?: string | null | undefined;
  /** Gateway data. Always present. */
  gateway: PaymentGateway;
  /**
   * Computed by the SDK from the spec's table: `payment_url` for QR_PAYMENT,
   * `gateway.redirect_url` for BANK_TRANSFER and MOBILE_WALLET. Send the customer here.
   * Always present, always `https://`.
   */
  customer_redirect_url: string;
  [extra: string]: unknown;
}

/**
 * The URL to send the customer to for a payment method, per the spec's table.
 *
 * @example
 * ```ts
 * res.redirect(customerRedirectUrl('BANK_TRANSFER', payment));
 * ```
 */
export function customerRedirectUrl(
  method: PaymentMethod,
  payment: { payment_url: string; gateway: { redirect_url: string } },
): string {
  return method === 'QR_PAYMENT' ? payment.payment_url : payment.gateway.redirect_url;
}
