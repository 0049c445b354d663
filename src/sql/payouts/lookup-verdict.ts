/**
 * What a status lookup says of an overdue payout (`sent`, no callback after `settleAfterMs`): the
 * one decision on which record settles a payout, which proves it was never made, and which
 * proves nothing. A pure function of the payout's row and the record found;
 * test/unit/sql/payouts/lookup-verdict.test.ts lists every row.
 *
 * - `settle`: a withdrawal (not a `PAY_` deposit) under the payout's reference, of its amount,
 *   with its service id when one is known, in a final status.
 * - `refuse`: the payout's service id is unknown (its request met `DUPLICATE_REFERENCE` on a
 *   recovery) and the withdrawal under its reference was made more than {@link CLOCK_ALLOWANCE_MS}
 *   (a day) before the payout was staged: the reference was used before (that payout's row purged, the
 *   reference staged again), so the service refused this payout and it was never made (A29).
 * - `wait`: anything else (not final yet, another amount, a deposit, no record, no lookup).
 *
 * @module
 */
import { TERMINAL_STATUSES } from '../../schemas/statuses.js';
import { madeAt } from './made-at.js';

/**
 * How long before a payout was staged a withdrawal under its reference must have been made to be
 * another payout's (assumption A29): a day, far beyond any clock's drift or a timestamp read in
 * the wrong zone (a refusal credits the seller back), and shorter than any retention after which
 * a merchant purges and reuses a reference.
 */
export const CLOCK_ALLOWANCE_MS = 86_400_000;

/**
 * The earliest time read as when a withdrawal was made: before it, a value is a placeholder for
 * none (year 1, the Unix epoch), and a refusal on it would credit back a payout that was paid.
 */
export const PLAUSIBLE_SINCE_MS = Date.UTC(2000, 0, 1);

const TERMINAL: ReadonlySet<string> = new Set(TERMINAL_STATUSES);

/** What the lookup knows of the payout: its row. */
export interface LookedUpPayout {
  readonly referenceId: string;
  readonly amount: string;
  /** The service's id of its withdrawal, when an answer named it. */
  readonly paymentId: string | undefined;
  /** When it was staged (ms since the epoch). */
  readonly stagedAt: number;
}

/** The status record found under the payout's reference (the fields read). */
export interface FoundRecord {
  readonly reference_id: string;
  readonly payment_id: string;
  readonly amount: number;
  readonly status: string;
  readonly created_at?: string | undefined;
}

/**
 * Whether a withdrawal made (or completed) `at` belongs to an earlier payout under the same
 * reference: the payout's service id is unknown (its request met `DUPLICATE_REFERENCE` on a
 * recovery) and `at` is an ISO 8601 date-time (extended or basic, with or without seconds: `madeAt`; no zone: UTC) more
 * than {@link CLOCK_ALLOWANCE_MS} before the payout was staged, and not before
 * {@link PLAUSIBLE_SINCE_MS}. Anything else (a date alone, no value, a bad one, a placeholder
 * such as the epoch) proves nothing. The status lookup reads the record's `created_at`; a callback
 * its signed `completed_at` (its `created_at` is not signed).
 *
 * @example
 * ```ts
 * const payout = { paymentId: undefined, stagedAt: Date.parse('2026-11-29T10:00:00Z') };
 * earlierPayouts(payout, '2026-10-01T08:00:00Z'); // true
 * earlierPayouts(payout, '2026-11-29T09:00:00'); // false: within the day
 * ```
 */
export function earlierPayouts(
  payout: Pick<LookedUpPayout, 'paymentId' | 'stagedAt'>,
  at: string | null | undefined,
): boolean {
  if (payout.paymentId !== undefined) return false;
  const made = madeAt(at);
  return made >= PLAUSIBLE_SINCE_MS && made < payout.stagedAt - CLOCK_ALLOWANCE_MS;
}

/** What to do with the payout. */
export type LookupVerdict =
  | {
      readonly verdict: 'settle';
      readonly state: 'succeeded' | 'failed';
      readonly status: string;
      readonly paymentId: string;
    }
  | { readonly verdict: 'refuse'; readonly message: string }
  | { readonly verdict: 'wait' };

/**
 * The verdict on an overdue payout from the record its lookup found (undefined: none, or the
 * lookup failed).
 *
 * @example
 * ```ts
 * const payout = { referenceId: 'PAYOUT1', amount: '250.00', paymentId: undefined, stagedAt: Date.parse('2026-11-29T10:00:00Z') };
 * lookupVerdict(payout, { reference_id: 'PAYOUT1', payment_id: 'WD_1', amount: 250, status: 'SUCCESS', created_at: '2026-11-29T10:00:02Z' });
 * // { verdict: 'settle', state: 'succeeded', status: 'SUCCESS', paymentId: 'WD_1' }
 * lookupVerdict(payout, { reference_id: 'PAYOUT1', payment_id: 'WD_0', amount: 250, status: 'SUCCESS', created_at: '2026-10-01T08:00:00Z' });
 * // { verdict: 'refuse', message: 'the reference was used by the earlier withdrawal WD_0, …' }
 * ```
 */
export function lookupVerdict(payout: LookedUpPayout, found: FoundRecord | undefined): LookupVerdict {
  if (found === undefined) return { verdict: 'wait' };
  const withdrawal = found.reference_id === payout.referenceId && !found.payment_id.startsWith('PAY_');
  if (!withdrawal) return { verdict: 'wait' };
  if (earlierPayouts(payout, found.created_at)) {
    const message = `the reference was used by the earlier withdrawal ${found.payment_id}, made at ${found.created_at ?? ''}, a day or more before this payout was staged: this payout was never made`;
    return { verdict: 'refuse', message: message.slice(0, 400) };
  }
  const mine =
    Number(found.amount) === Number(payout.amount) &&
    (payout.paymentId === undefined || payout.paymentId === found.payment_id);
  if (!mine || !TERMINAL.has(found.status)) return { verdict: 'wait' };
  return {
    verdict: 'settle',
    state: found.status === 'SUCCESS' ? 'succeeded' : 'failed',
    status: found.status,
    paymentId: found.payment_id,
  };
}
