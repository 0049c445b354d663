/**
 * The one decision after an ambiguous payment create met `DUPLICATE_REFERENCE`: is the record
 * the status lookup found the payment **this call** made (its answer was lost), or a payment
 * that already held the `reference_id` before the call started (a reused reference)? A pure
 * function; test/unit/resources/ownership.test.ts lists every row.
 *
 * A record is this call's only when all of these hold:
 * 1. it is a deposit, not a withdrawal (A7: references are unique across both);
 * 2. its amount is the requested amount, exactly;
 * 3. its status is `PENDING` or `PROCESSING`: the customer never received this call's payment
 *    URL, so the payment cannot have been paid, failed or refunded yet (an unknown status is
 *    not trusted);
 * 4. its `created_at` is no earlier than the call's start minus {@link CLOCK_TOLERANCE_MS}
 *    (the service's clock and ours may differ); a missing or unreadable `created_at` proves
 *    nothing and is not trusted.
 * Anything else is someone else's payment: the merchant gets `DuplicateReferenceError` with the
 * record, never an old payment presented as the new one.
 *
 * @module
 */

/**
 * How far the service's clock may lag ours when `created_at` is compared with the call's
 * start (docs/assumptions.md, A27).
 */
export const CLOCK_TOLERANCE_MS = 5 * 60_000;

/** The fields of a status record the decision reads. */
export interface FoundRecord {
  payment_id: string;
  amount: number;
  status: string;
  created_at?: string | undefined;
  transaction_type?: unknown;
}

/** Why a found record is not this call's payment. */
export type NotOurs = 'withdrawal' | 'amount' | 'status' | 'created_before_call' | 'created_at_unknown';

/**
 * Why `record` cannot be the payment a create started at `callStartedAt` (epoch ms) made, or
 * undefined when it can be.
 */
export function notOurs(record: FoundRecord, requestedAmount: number, callStartedAt: number): NotOurs | undefined {
  // A withdrawal held by the status endpoint (A6, A19), not a deposit.
  if (record.transaction_type === 'WITHDRAWAL' || record.payment_id.startsWith('WD_')) return 'withdrawal';
  // Both are JSON numbers read from decimal text with at most 2 decimals: equal decimals are equal doubles.
  if (record.amount !== requestedAmount) return 'amount';
  if (record.status !== 'PENDING' && record.status !== 'PROCESSING') return 'status';
  const created = typeof record.created_at === 'string' ? Date.parse(record.created_at) : Number.NaN;
  if (Number.isNaN(created)) return 'created_at_unknown';
  if (created < callStartedAt - CLOCK_TOLERANCE_MS) return 'created_before_call';
  return undefined;
}
