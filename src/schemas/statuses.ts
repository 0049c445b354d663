/**
 * Payment statuses, without any schema library: the webhooks entry needs the terminal list,
 * and must not load zod to get it.
 *
 * @module
 */

/** Every payment status the service reports. */
export const PAYMENT_STATUSES = [
  'PENDING',
  'PROCESSING',
  'SUCCESS',
  'FAILED',
  'EXPIRED',
  'CANCELLED',
  'REFUNDED',
] as const;
/** A payment status. Unknown future values pass through as strings. */
export type PaymentStatusValue = (typeof PAYMENT_STATUSES)[number];

/** Statuses that end a payment and trigger a callback. */
export const TERMINAL_STATUSES = ['SUCCESS', 'FAILED', 'EXPIRED', 'CANCELLED', 'REFUNDED'] as const;
/** A terminal status. */
export type TerminalStatus = (typeof TERMINAL_STATUSES)[number];

/**
 * A payment's status record (`GET /payment/status/:identifier`). `payment_id`,
 * `reference_id`, `amount`, `currency` and `status` are always present (an answer without
 * them is an `InvalidResponseError`); the others as the spec describes them. The one name for
 * the record: `DuplicateReferenceError.existingPayment` and `confirmDeposit`'s source use it too,
 * which is why it lives here, without zod, where the webhooks entry can reach it. Written out
 * rather than inferred from the schema: zod's inference needs `strict`, and in a project
 * without it `amount` came out optional, so `confirmDeposit(event, gateway)` did not compile
 * there. test/types/params.test-d.ts holds the schema's output to this shape.
 */
export interface PaymentStatus {
  /** Payment identifier; begins with `PAY_`. Always present. */
  payment_id: string;
  /** Your original reference. Always present. */
  reference_id: string;
  /** Payment amount in MYR, as a number (`120.5`). Always present. */
  amount: number;
  /** Currency code, `MYR`. Always present. */
  currency: string;
  /**
   * `PENDING`, `PROCESSING`, then one terminal status: `SUCCESS`, `FAILED`, `EXPIRED`,
   * `CANCELLED` or `REFUNDED`. Always present; a status the spec does not list yet passes
   * through as a string.
   * @example 'SUCCESS'
   */
  status: PaymentStatusValue | (string & {});
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
