/**
 * The order of a payment's statuses, so a callback that arrives after a later one of the
 * same payment (SUCCESS delivered after REFUNDED) is not fulfilled: one pure function with a
 * table test (test/unit/webhooks/lifecycle.test.ts).
 *
 * @module
 */
import { TERMINAL_STATUSES } from '../schemas/statuses.js';

/**
 * A status's place in a payment's life: PENDING and PROCESSING (0) come before the outcomes
 * SUCCESS, FAILED, EXPIRED and CANCELLED (1), which come before REFUNDED (2). Outcomes of one
 * rank do not order each other; an unknown status ranks with the outcomes.
 *
 * @example
 * ```ts
 * lifecycleRank('REFUNDED') > lifecycleRank('SUCCESS'); // true
 * ```
 */
export function lifecycleRank(status: string): number {
  switch (status) {
    case 'PENDING':
    case 'PROCESSING':
      return 0;
    case 'REFUNDED':
      return 2;
    default:
      return 1;
  }
}

const LOWEST_CALLBACK_RANK = Math.min(...TERMINAL_STATUSES.map(lifecycleRank));

/**
 * Whether a completed `status` can supersede any callback, so its payment's high-water mark
 * is worth keeping: only a status ranked above the lowest callback status (today REFUNDED).
 * The mark costs Redis memory per payment; SUCCESS and the other outcomes write none.
 *
 * @example
 * ```ts
 * canSupersede('REFUNDED'); // true
 * canSupersede('SUCCESS'); // false: no callback is older than an outcome
 * ```
 */
export function canSupersede(status: string): boolean {
  return lifecycleRank(status) > LOWEST_CALLBACK_RANK;
}

/**
 * Whether a callback for `incoming` is older than `completed`, one already handled for the
 * same payment: then it is acknowledged and not fulfilled (outcome `superseded`).
 *
 * @example
 * ```ts
 * isSuperseded('REFUNDED', 'SUCCESS'); // true: do not fulfil a refunded payment
 * isSuperseded('SUCCESS', 'REFUNDED'); // false
 * ```
 */
export function isSuperseded(completed: string, incoming: string): boolean {
  return lifecycleRank(completed) > lifecycleRank(incoming);
}
