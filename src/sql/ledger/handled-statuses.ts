/**
 * Which bit of a payment's record says a status was handled: the SQL ledger keeps one row per
 * payment for good (`handled_statuses`, a bit per status), so a resend of a handled callback is a
 * duplicate at any age, long after the callback's own record expired and was pruned.
 *
 * @module
 */
import { PAYMENT_STATUSES } from '../../schemas/statuses.js';

/**
 * The bit of `status` in a payment's `handled_statuses`: one per status of the spec, in its order
 * (PENDING 1 … REFUNDED 64). A status the spec does not name has none (0): its run is remembered
 * only as long as its callback's own record lasts (`completedTtlMs`).
 *
 * @example
 * ```ts
 * handledBit('SUCCESS'); // 4
 * handledBit('SETTLED'); // 0: not a status of the spec
 * ```
 */
export function handledBit(status: string | undefined): number {
  const index = PAYMENT_STATUSES.findIndex((known) => known === status);
  return index < 0 ? 0 : 1 << index;
}

/**
 * The expiry of a payment's record: never (the largest integer every database and JavaScript hold
 * exactly), so `prune` never takes it.
 */
export const KEPT_FOR_GOOD = Number.MAX_SAFE_INTEGER;
