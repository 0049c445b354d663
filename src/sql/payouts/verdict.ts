/**
 * What one request of a staged payout ended in, from the error it threw: the one decision that
 * says which failures are definitive. A pure function of the error's code and HTTP status, and
 * of whether this was the payout's very first request; test/unit/sql/payouts/verdict.test.ts
 * lists every row.
 *
 * - `refused`: the service said no, for good, before processing: the payout moves to `refused`
 *   and `onRefused` runs (once). A request the service judged invalid (400/422: `VALIDATION_ERROR`,
 *   `INVALID_AMOUNT`, `INVALID_BANK_CODE`, …), and `DUPLICATE_REFERENCE` on the very first request
 *   (another transaction held the reference before this payout was ever sent).
 * - `sent`: `DUPLICATE_REFERENCE` on a later request: an earlier one of this payout arrived
 *   (`withdrawals.recover`'s rule, assumption A21).
 * - `wait`: certainly not processed, try later (the service checks these before processing, A18):
 *   429, `MERCHANT_DISABLED`, `MERCHANT_LOCKED`, `NO_GATEWAY_AVAILABLE`, an authentication failure,
 *   the client's own configuration. A first request that met one is still unsent.
 * - `unknown`: anything else: a timeout, a lost connection, a 5xx, an answer that does not name
 *   the payout, an error the SDK did not make. The payout may be at the service: it is asked
 *   again with the same reference, never sent as new.
 *
 * @module
 */

/** What a failed request of a payout means for it. */
export type PayoutVerdict = 'refused' | 'sent' | 'wait' | 'unknown';

/** The service's codes that refuse a payout for good (its request is wrong). */
const REFUSALS: ReadonlySet<unknown> = new Set([
  'VALIDATION_ERROR',
  'INVALID_AMOUNT',
  'INVALID_BANK_CODE',
  'MISSING_PROVIDER_CHANNEL',
  'INVALID_PROVIDER_CHANNEL',
]);
/** Codes the service answers before processing, that a later request may not meet. */
const WAITS: ReadonlySet<unknown> = new Set([
  'RATE_LIMITED',
  'MERCHANT_DISABLED',
  'MERCHANT_LOCKED',
  'NO_GATEWAY_AVAILABLE',
  'UNAUTHORIZED',
  'TOKEN_EXPIRED',
  'INVALID_CREDENTIALS',
  'INVALID_CONFIGURATION',
]);

/**
 * The verdict on a payout's failed request. `error` is what `withdrawals.create` (first request)
 * or `withdrawals.recover` (any later one) threw; only its `code` and `status` are read.
 *
 * @example
 * ```ts
 * payoutVerdict({ code: 'INVALID_BANK_CODE', status: 400 }, true); // 'refused'
 * payoutVerdict({ code: 'DUPLICATE_REFERENCE', status: 409 }, false); // 'sent'
 * payoutVerdict({ code: 'OUTCOME_UNKNOWN', status: 502 }, true); // 'unknown'
 * ```
 */
export function payoutVerdict(error: unknown, firstRequest: boolean): PayoutVerdict {
  const { code, status } =
    typeof error === 'object' && error !== null ? (error as { code?: unknown; status?: unknown }) : {};
  if (code === 'DUPLICATE_REFERENCE') return firstRequest ? 'refused' : 'sent';
  // A 5xx is never a refusal, whatever code it carries: it may have been processed.
  if (typeof status === 'number' && status >= 500)
    return code === 'NO_GATEWAY_AVAILABLE' && status === 503 ? 'wait' : 'unknown';
  if (REFUSALS.has(code) && (status === undefined || status === 400 || status === 422)) return 'refused';
  if (WAITS.has(code) || status === 429) return 'wait';
  return 'unknown';
}
