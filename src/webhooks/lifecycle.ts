/**
 * The order of a payment's statuses, so a callback that arrives after a later one of the
 * same payment (SUCCESS delivered after REFUNDED) is not fulfilled: one pure function with a
 * table test (test/unit/webhooks/lifecycle.test.ts). Every store takes its ranks from here (the
 * memory store and the Redis scripts' arguments through {@link laterRanks}), so adding a status
 * is a change to {@link RANKS} that the compiler (every status of `PAYMENT_STATUSES` must be
 * ranked) and the stores' rank tests (test/helpers/store-ranks.ts, run by
 * test/unit/webhooks/stores/memory-ranks.test.ts and test/integration/redis-webhook-store.test.ts)
 * follow everywhere.
 *
 * @module
 */
import { TERMINAL_STATUSES, type PaymentStatusValue } from '../schemas/statuses.js';

/** Each status's place in a payment's life; a status not listed ranks with the outcomes (SUCCESS). */
const RANKS: Readonly<Record<PaymentStatusValue, number>> = {
  PENDING: 0,
  PROCESSING: 0,
  SUCCESS: 1,
  FAILED: 1,
  EXPIRED: 1,
  CANCELLED: 1,
  REFUNDED: 2,
};
// Pure: the client's bundle shares this module's chunk and never ranks a status, so it drops the map.
const RANK_OF: ReadonlyMap<string, number> = /* @__PURE__ */ new Map(/* @__PURE__ */ Object.entries(RANKS));

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
  return RANK_OF.get(status) ?? RANKS.SUCCESS;
}

/**
 * @internal The ranks that supersede a callback of `rank`: the one comparison of ranks. A store
 * answers `superseded` when its payment's high-water mark is one of them, and raises the mark
 * unless it is one of them (the Redis scripts get them as arguments).
 */
export function laterRanks(rank: number): number[] {
  return [...new Set(RANK_OF.values())].filter((later) => later > rank);
}

/**
 * @internal The rank no status is later than, so a mark at it supersedes nothing: what the SQL
 * ledger writes into a payment's mark for a status that does not raise it (it writes the row
 * for its lock). A function, so that the webhooks entry, which never calls it, does not carry it.
 */
export function supersedesNothing(): number {
  return Math.min(...RANK_OF.values());
}

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
  return lifecycleRank(status) > Math.min(...TERMINAL_STATUSES.map(lifecycleRank));
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
  return laterRanks(lifecycleRank(incoming)).includes(lifecycleRank(completed));
}
