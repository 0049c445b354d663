/**
 * Payment statuses, without any schema library: the webhooks entry needs the terminal list,
 * and must not load zod to get it.
 *
 * @module
 */

/** Every payment status the service reports. */
export const PAYMENT_STATUSES = ['PENDING', 'PROCESSING', 'SUCCESS', 'FAILED', 'EXPIRED', 'CANCELLED', 'REFUNDED'] as const;
/** A payment status. Unknown future values pass through as strings. */
export type PaymentStatusValue = (typeof PAYMENT_STATUSES)[number];

/** Statuses that end a payment and trigger a callback. */
export const TERMINAL_STATUSES = ['SUCCESS', 'FAILED', 'EXPIRED', 'CANCELLED', 'REFUNDED'] as const;
/** A terminal status. */
export type TerminalStatus = (typeof TERMINAL_STATUSES)[number];
