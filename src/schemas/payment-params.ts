/**
 * The request side of `POST /payment/request`: one schema per rule of the spec, and the
 * {@link PaymentCreateParams} type derived from them. Each schema's shape is written out as a
 * type with the field's rule and an example, so the rule shows on hover in a merchant's editor
 * (zod's inferred shapes reach the emitted `.d.ts` without their comments).
 *
 * @module
 */
import * as z from 'zod/mini';
import { PROVIDER_CHANNELS } from './bank-codes.js';
import {
  amountSchema,
  CURRENCY,
  DEPOSIT_AMOUNT,
  httpsUrlSchema,
  nonBlank,
  oneOf,
  referenceIdSchema,
  rule,
} from './common.js';

/** Deposit methods (`payment_method`). */
export const PAYMENT_METHODS = ['QR_PAYMENT', 'BANK_TRANSFER', 'MOBILE_WALLET'] as const;
/** A deposit method. */
export type PaymentMethod = (typeof PAYMENT_METHODS)[number];

const depositAmount = amountSchema(DEPOSIT_AMOUNT, 'deposit');
const currency = z.optional(oneOf([CURRENCY], 'currency must be "MYR"'));
const customerName = nonBlank('customer_name');
const customerPhone = z.string({ error: 'customer_phone must be a string' }).check(
  rule((s: string) => s.length > 0, 'customer_phone must not be empty'),
  rule((s: string) => s.length <= 50, 'customer_phone must be at most 50 characters'),
  rule(
    (s: string) => !s.startsWith('+'),
    'customer_phone must include the country code without a leading "+" (e.g. 60123456789)',
  ),
);
const callbackUrl = z.optional(httpsUrlSchema('callback_url'));
const redirectUrl = z.optional(httpsUrlSchema('redirect_url'));

/** The fields every payment method shares, each with the spec's rule (checked before sending). */
type PaymentCreateFields = {
  /**
   * Amount in MYR: 5 to 50,000 inclusive, at most 2 decimal places. A number or a plain decimal
   * string (keep money as strings); judged on its decimal digits, never rounded, and sent as a
   * JSON number. `1.005`, `'1e3'` or `'1,000'` are refused with `INVALID_AMOUNT`.
   * @example '149.90'
   */
  amount: typeof depositAmount;
  /**
   * `MYR`, the only currency. Optional: the merchant's configured currency applies.
   * @example 'MYR'
   */
  currency: typeof currency;
  /**
   * Your order id, and the idempotency key: 1 to 100 characters of a-z, A-Z, 0-9 (no spaces,
   * hyphens or underscores). Unique across your deposits and withdrawals: a used one is
   * refused (`DUPLICATE_REFERENCE`), so a retry with the same id never pays twice.
   * @example 'ORDER1001'
   */
  reference_id: typeof referenceIdSchema;
  /**
   * The customer's name; not blank.
   * @example 'Aisyah Rahman'
   */
  customer_name: typeof customerName;
  /**
   * The customer's phone: 1 to 50 characters, with the country code and no leading `+`.
   * @example '60123456789'
   */
  customer_phone: typeof customerPhone;
  /**
   * Where this payment's callback is posted, instead of your default callback URL: an
   * absolute `https://` URL without spaces, control or invisible characters, sent normalised. `http://`
   * only to a loopback host, with `allowInsecureLoopback`.
   * @example 'https://shop.example/webhooks/myr'
   */
  callback_url: typeof callbackUrl;
  /**
   * Where the customer's browser returns after paying: an absolute `https://` URL without
   * spaces, control or invisible characters, sent normalised (loopback `http://` as for `callback_url`).
   * @example 'https://shop.example/orders/ORDER1001'
   */
  redirect_url: typeof redirectUrl;
};

const paymentCreateFields: PaymentCreateFields = {
  amount: depositAmount,
  currency,
  reference_id: referenceIdSchema,
  customer_name: customerName,
  customer_phone: customerPhone,
  callback_url: callbackUrl,
  redirect_url: redirectUrl,
};

const providerChannelId = oneOf(PROVIDER_CHANNELS, (issue) =>
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

const qrOrWalletMethod = oneOf(
  ['QR_PAYMENT', 'MOBILE_WALLET'],
  `payment_method must be one of ${PAYMENT_METHODS.join(', ')}`,
);
const freeMetadata = z.optional(
  z.custom<Record<string, unknown>>(isPlainObject, { error: 'metadata must be an object' }),
);

/** A QR or wallet payment: the shared fields, the method, and optional metadata. */
type QrOrWalletShape = {
  /**
   * `QR_PAYMENT` (send the customer to `payment_url`, which shows the QR) or `MOBILE_WALLET`
   * (to `gateway.redirect_url`); `customer_redirect_url` of the result picks the right one.
   * @example 'QR_PAYMENT'
   */
  payment_method: typeof qrOrWalletMethod;
} & PaymentCreateFields & {
    /**
     * Free key-value data stored with the payment: a plain object. Never echoed in callbacks.
     * @example { cart: 'C-77' }
     */
    metadata: typeof freeMetadata;
  };

// `payment_method` comes first, so an unknown method is the first problem reported.
const qrOrWalletParamsSchema: z.ZodMiniObject<QrOrWalletShape, z.core.$strip> = z.object({
  payment_method: qrOrWalletMethod,
  ...paymentCreateFields,
  metadata: freeMetadata,
});

/** The `metadata` of a bank transfer. */
type BankTransferMetadataShape = {
  /**
   * The customer's bank: a code from group A or group B of the spec
   * (`PROVIDER_CHANNELS_GROUP_A`, `PROVIDER_CHANNELS_GROUP_B`); any other is refused with
   * `INVALID_PROVIDER_CHANNEL`, none with `MISSING_PROVIDER_CHANNEL`.
   * @example 'MB2U0227'
   */
  provider_channel_id: typeof providerChannelId;
};

const bankTransferMetadata: z.ZodMiniObject<BankTransferMetadataShape, z.core.$loose> = z.looseObject(
  { provider_channel_id: providerChannelId },
  { error: 'BANK_TRANSFER requires metadata.provider_channel_id (a bank code from group A or B)' },
);
const bankTransferMethod = oneOf(['BANK_TRANSFER'], 'payment_method must be BANK_TRANSFER');

/** A bank transfer: the shared fields, the method, and metadata with the bank. */
type BankTransferShape = {
  /**
   * `BANK_TRANSFER`: the customer authorises at their bank (`gateway.redirect_url`).
   * @example 'BANK_TRANSFER'
   */
  payment_method: typeof bankTransferMethod;
} & PaymentCreateFields & {
    /**
     * Required for `BANK_TRANSFER`: `provider_channel_id`, the customer's bank. Other keys are
     * stored with the payment; never echoed in callbacks.
     * @example { provider_channel_id: 'MB2U0227' }
     */
    metadata: typeof bankTransferMetadata;
  };

const bankTransferParamsSchema: z.ZodMiniObject<BankTransferShape, z.core.$strip> = z.object({
  payment_method: bankTransferMethod,
  ...paymentCreateFields,
  metadata: bankTransferMetadata,
});

/**
 * Client-side rules for `POST /payment/request`, one per rule of the spec, chosen by
 * `payment_method` (a hand-made discriminated union: zod's own costs 0.8 kB min+gzip in every
 * bundle). The {@link PaymentCreateParams} type is derived from the two schemas.
 */
export function paymentCreateParamsSchema(
  params: unknown,
): typeof qrOrWalletParamsSchema | typeof bankTransferParamsSchema {
  return (params as { payment_method?: unknown } | null)?.payment_method === 'BANK_TRANSFER'
    ? bankTransferParamsSchema
    : qrOrWalletParamsSchema;
}

/**
 * Body of `POST /payment/request`. For `BANK_TRANSFER`, `metadata.provider_channel_id`
 * is required and must come from the spec's bank lists. Every field's rule shows on hover;
 * all are checked before anything is sent (`InvalidRequestError` naming the field).
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
