/**
 * Status lists without zod, so that `myr-gateway/webhooks` can use them without loading
 * the client's schemas.
 *
 * @module
 */

/** Statuses that end a payment and trigger a callback. */
export const TERMINAL_STATUSES = ['SUCCESS', 'FAILED', 'EXPIRED', 'CANCELLED', 'REFUNDED'] as const;
/** A terminal status. */
export type TerminalStatus = (typeof TERMINAL_STATUSES)[number];
