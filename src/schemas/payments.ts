import { z } from 'zod';
import { PROVIDER_CHANNELS_GROUP_A, PROVIDER_CHANNELS_GROUP_B, type ProviderChannelId } from './bank-codes.js';
import { amountFromWire, amountSchema, CURRENCY, DEPOSIT_AMOUNT, httpsUrlSchema, referenceIdSchema } from './common.js';

/** Deposit methods (`payment_method`). */
export const PAYMENT_METHODS = ['QR_PAYMENT', 'BANK_TRANSFER', 'MOBILE_WALLET'] as const;
/** A deposit method. */
export type PaymentMethod = (typeof PAYMENT_METHODS)[number];

/** Every payment status the service reports. */
export const PAYMENT_STATUSES = ['PENDING', 'PROCESSING', 'SUCCESS', 'FAILED', 'EXPIRED', 'CANCELLED', 'REFUNDED'] as const;
/** A payment status. Unknown future values pass through as strings. */
export type PaymentStatusValue = (typeof PAYMENT_STATUSES)[number];

export { TERMINAL_STATUSES, type TerminalStatus } from './statuses.js';

interface PaymentCreateCommon {
  /** Amount in MYR: 5 to 50,000 inclusive, at most 2 decimal places. */
  amount: number;
  /** ISO 4217 code; only `MYR` exists. Defaults to the merchant's configured currency. */
  currency?: typeof CURRENCY;
  /** Your unique order/invoice id: 1 to 100 characters of a-z, A-Z, 0-9. */
  reference_id: string;
  /** The customer's name. */
  customer_name: string;
  /** 1 to 50 characters, with country code and no leading `+` (e.g. `60123456789`). */
  customer_phone: string;
  /** Where callbacks are posted (https). Falls back to your default callback URL. */
  callback_url?: string;
  /** Where the customer returns after paying (https). */
  redirect_url?: string;
}

/**
 * Body of `POST /payment/request`. For `BANK_TRANSFER`, `metadata.provider_channel_id`
 * is required and must come from the spec's bank lists.
 *
 * @example
 * ```ts
 * const params: PaymentCreateParams = {
 *   amount: 120.5,
 *   reference_id: 'ORDER1001',
 *   customer_name: 'Aisyah Rahman',
 *   customer_phone: '60123456789',
 *   payment_method: 'BANK_TRANSFER',
 *   metadata: { provider_channel_id: 'MB2U0227' },
 * };
 * ```
 */
export type PaymentCreateParams =
  | (PaymentCreateCommon & {
      payment_method: 'QR_PAYMENT' | 'MOBILE_WALLET';
      /** Free key-value data stored with the payment; never echoed in callbacks. */
      metadata?: Record<string, unknown>;
    })
  | (PaymentCreateCommon & {
      payment_method: 'BANK_TRANSFER';
      /** Must carry the bank's `provider_channel_id`. Never echoed in callbacks. */
      metadata: { provider_channel_id: ProviderChannelId } & Record<string, unknown>;
    });

const providerChannels = new Set<string>([...PROVIDER_CHANNELS_GROUP_A, ...PROVIDER_CHANNELS_GROUP_B]);

/** Client-side rules for a payment create request, one per rule of the spec. */
export const paymentCreateParamsSchema = z
  .object({
    amount: amountSchema(DEPOSIT_AMOUNT, 'deposit'),
    currency: z.literal(CURRENCY, { error: 'currency must be "MYR"' }).optional(),
    reference_id: referenceIdSchema,
    customer_name: z
      .string({ error: 'customer_name must be a string' })
      .refine((s) => s.trim().length > 0, { error: 'customer_name must not be empty' }),
    customer_phone: z
      .string({ error: 'customer_phone must be a string' })
      .min(1, { error: 'customer_phone must not be empty' })
      .max(50, { error: 'customer_phone must be at most 50 characters' })
      .refine((s) => !s.startsWith('+'), {
        error: 'customer_phone must include the country code without a leading "+" (e.g. 60123456789)',
      }),
    callback_url: httpsUrlSchema('callback_url').optional(),
    redirect_url: httpsUrlSchema('redirect_url').optional(),
    payment_method: z.enum(PAYMENT_METHODS, {
      error: `payment_method must be one of ${PAYMENT_METHODS.join(', ')}`,
    }),
    metadata: z.record(z.string(), z.unknown(), { error: 'metadata must be an object' }).optional(),
  })
  .superRefine((params, ctx) => {
    if (params.payment_method !== 'BANK_TRANSFER') return;
    const channel = params.metadata?.provider_channel_id;
    if (channel === undefined || channel === null || channel === '') {
      ctx.addIssue({
        code: 'custom',
        path: ['metadata', 'provider_channel_id'],
        message: 'BANK_TRANSFER requires metadata.provider_channel_id (a bank code from group A or B)',
      });
    } else if (typeof channel !== 'string' || !providerChannels.has(channel)) {
      ctx.addIssue({
        code: 'custom',
        path: ['metadata', 'provider_channel_id'],
        message: 'metadata.provider_channel_id is not a bank code from group A or group B of the spec',
      });
    }
  });

/**
 * `data` of a successful `POST /payment/request`. Extra fields are kept. Only the fields
 * without which the merchant cannot go on (`payment_id`, `payment_url`) are required: the
 * payment exists once the service answered 2xx, so a missing echo field must not turn a
 * created payment into an error. The resource fills such fields from the request.
 */
export const paymentCreatedSchema = z.looseObject({
  payment_id: z.string().min(1),
  payment_url: z.string().min(1),
  status: z.string().optional(),
  amount: amountFromWire.optional(),
  currency: z.string().optional(),
  reference_id: z.string().optional(),
  expires_in: z.number().optional(),
  expires_at: z.string().nullable().optional(),
  gateway: z
    .looseObject({
      behavior: z.string().optional(),
      redirect_url: z.string().optional(),
      qr_data_string: z.string().nullable().optional(),
    })
    .nullable()
    .optional(),
});

/** `data` of `GET /payment/status/:identifier`. Extra fields are kept. */
export const paymentStatusSchema = z.looseObject({
  payment_id: z.string().min(1),
  reference_id: z.string(),
  amount: amountFromWire,
  currency: z.string(),
  status: z.string(),
  gateway_reference: z.string().nullable().optional(),
  created_at: z.string().optional(),
  completed_at: z.string().nullable().optional(),
  expires_at: z.string().nullable().optional(),
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

/** A payment's status record. */
export interface PaymentStatus {
  payment_id: string;
  reference_id: string;
  amount: number;
  currency: string;
  status: PaymentStatusValue | (string & {});
  /** Gateway's transaction reference; null until processed. */
  gateway_reference?: string | null | undefined;
  /** ISO 8601 creation time. */
  created_at: string;
  completed_at?: string | null | undefined;
  expires_at?: string | null | undefined;
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
