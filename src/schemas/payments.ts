import * as z from 'zod/mini';
import { PROVIDER_CHANNELS_GROUP_A, PROVIDER_CHANNELS_GROUP_B } from './bank-codes.js';
import { amountFromWire, amountSchema, CURRENCY, DEPOSIT_AMOUNT, httpsUrlSchema, nonBlank, oneOf, referenceIdSchema, rule } from './common.js';
import type { PaymentStatusValue } from './statuses.js';

export { PAYMENT_STATUSES, TERMINAL_STATUSES, type PaymentStatusValue, type TerminalStatus } from './statuses.js';

/** Deposit methods (`payment_method`). */
export const PAYMENT_METHODS = ['QR_PAYMENT', 'BANK_TRANSFER', 'MOBILE_WALLET'] as const;
/** A deposit method. */
export type PaymentMethod = (typeof PAYMENT_METHODS)[number];

/** The fields every payment method shares, one rule of the spec each. */
const paymentCreateCommon = {
  /** Amount in MYR: 5 to 50,000 inclusive, at most 2 decimal places; a number or a decimal string such as `'120.50'`. */
  amount: amountSchema(DEPOSIT_AMOUNT, 'deposit'),
  /** ISO 4217 code; only `MYR` exists. Defaults to the merchant's configured currency. */
  currency: z.optional(z.literal(CURRENCY, { error: 'currency must be "MYR"' })),
  /** Your unique order/invoice id: 1 to 100 characters of a-z, A-Z, 0-9. */
  reference_id: referenceIdSchema,
  /** The customer's name. */
  customer_name: nonBlank('customer_name'),
  /** 1 to 50 characters, with country code and no leading `+` (e.g. `60123456789`). */
  customer_phone: z.string({ error: 'customer_phone must be a string' }).check(
    rule((s: string) => s.length > 0, 'customer_phone must not be empty'),
    rule((s: string) => s.length <= 50, 'customer_phone must be at most 50 characters'),
    rule((s: string) => !s.startsWith('+'), 'customer_phone must include the country code without a leading "+" (e.g. 60123456789)'),
  ),
  /** Where callbacks are posted (https). Falls back to your default callback URL. */
  callback_url: z.optional(httpsUrlSchema('callback_url')),
  /** Where the customer returns after paying (https). */
  redirect_url: z.optional(httpsUrlSchema('redirect_url')),
};

const providerChannelId = oneOf([...PROVIDER_CHANNELS_GROUP_A, ...PROVIDER_CHANNELS_GROUP_B], (issue) =>
  issue.input === undefined || issue.input === null || issue.input === ''
    ? 'BANK_TRANSFER requires metadata.provider_channel_id (a bank code from group A or B)'
    : 'metadata.provider_channel_id is not a bank code from group A or group B of the spec',
);

/** A plain object: a Map would be sent as `{}` (its entries lost), a Date as a string. */
const isPlainObject = (value: unknown): value is Record<string, unknown> => {
  if (value === null || typeof value !== 'object') return false;
  const proto: unknown = Object.getPrototypeOf(value);
  return proto === Object.prototype || proto === null;
};

// `payment_method` comes first, so an unknown method is the first problem reported.
const qrOrWalletParamsSchema = z.object({
  payment_method: oneOf(['QR_PAYMENT', 'MOBILE_WALLET'], `payment_method must be one of ${PAYMENT_METHODS.join(', ')}`),
  ...paymentCreateCommon,
  /** Free key-value data stored with the payment; never echoed in callbacks. */
  metadata: z.optional(z.custom<Record<string, unknown>>(isPlainObject, { error: 'metadata must be an object' })),
});

const bankTransferParamsSchema = z.object({
  payment_method: z.literal('BANK_TRANSFER'),
  ...paymentCreateCommon,
  /** Must carry the bank's `provider_channel_id`. Never echoed in callbacks. */
  metadata: z.looseObject(
    { provider_channel_id: providerChannelId },
    { error: 'BANK_TRANSFER requires metadata.provider_channel_id (a bank code from group A or B)' },
  ),
});

/**
 * Client-side rules for `POST /payment/request`, one per rule of the spec, chosen by
 * `payment_method` (a hand-made discriminated union: zod's own costs 0.8 kB min+gzip in every
 * bundle). The {@link PaymentCreateParams} type is derived from the two schemas.
 */
export function paymentCreateParamsSchema(params: unknown): typeof qrOrWalletParamsSchema | typeof bankTransferParamsSchema {
  return (params as { payment_method?: unknown } | null)?.payment_method === 'BANK_TRANSFER' ? bankTransferParamsSchema : qrOrWalletParamsSchema;
}

/**
 * Body of `POST /payment/request`. For `BANK_TRANSFER`, `metadata.provider_channel_id`
 * is required and must come from the spec's bank lists.
 *
 * @example
 * ```ts
 * const params: PaymentCreateParams = {
 *   amount: '120.50',
 *   reference_id: 'ORDER1001',
 *   customer_name: 'Aisyah Rahman',
 *   customer_phone: '60123456789',
 *   payment_method: 'BANK_TRANSFER',
 *   metadata: { provider_channel_id: 'MB2U0227' },
 * };
 * ```
 */
export type PaymentCreateParams = z.input<typeof qrOrWalletParamsSchema> | z.input<typeof bankTransferParamsSchema>;

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
  expires_in: z.optional(z.number()),
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

/**
 * A payment's status record (`GET /payment/status/:identifier`). Written out rather than
 * inferred from the schema: zod's inference needs `strict`, and in a project without it
 * `amount` came out optional, so `confirmDeposit(event, gateway)` did not compile there.
 * test/types/params.test-d.ts holds the schema's output to this shape.
 */
export interface PaymentStatus {
  /** Payment identifier. */
  payment_id: string;
  /** Your original reference. */
  reference_id: string;
  /** Payment amount in MYR. */
  amount: number;
  /** Currency code, `MYR`. */
  currency: string;
  /** One of {@link PAYMENT_STATUSES}; unknown future values pass through. */
  status: string;
  /** Gateway's transaction reference; null until processed. */
  gateway_reference?: string | null | undefined;
  /** ISO 8601 creation time (the spec always sends it; tolerated when missing). */
  created_at?: string | undefined;
  /** ISO 8601; null if not completed. */
  completed_at?: string | null | undefined;
  /** ISO 8601; null if not set. */
  expires_at?: string | null | undefined;
  [extra: string]: unknown;
}

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

/** A created payment: the spec's `data` object, plus the URL to send the customer to. */
export interface PaymentCreated {
  /** Unique payment id; begins with `PAY_`. */
  payment_id: string;
  /** Payment page URL (shows the QR for QR_PAYMENT). */
  payment_url: string;
  /** Initial status, `PROCESSING`. */
  status: PaymentStatusValue | (string & {});
  /** Confirmed amount. */
  amount: number;
  /** Currency code, `MYR`. */
  currency: string;
  /** Your reference. */
  reference_id: string;
  /** Seconds until expiry. */
  expires_in?: number | undefined;
  /** Expiry timestamp, ISO 8601. */
  expires_at?: string | null | undefined;
  /** Gateway data. */
  gateway: PaymentGateway;
  /**
   * Computed by the SDK from the spec's table: `payment_url` for QR_PAYMENT,
   * `gateway.redirect_url` for BANK_TRANSFER and MOBILE_WALLET. Send the customer here.
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
