/**
 * What `SqlPayouts` is given and what it tells: its options and hooks, the refusal and the
 * settlement the hooks receive, and what `get` and `settle` answer.
 *
 * @module
 */
import type { PayoutState } from './statement-shape.js';

/** A payout the service refused for good, given to `onRefused`. */
export interface PayoutRefusal {
  /** The payout's `reference_id`. */
  readonly referenceId: string;
  /** The amount staged, as it was given (`'250.00'`). */
  readonly amount: string;
  /** The service's code (`INVALID_BANK_CODE`, `INVALID_AMOUNT`, `VALIDATION_ERROR`, `DUPLICATE_REFERENCE`, …). */
  readonly code: string;
  /** The service's message, the account number masked. */
  readonly message: string;
}

/** A payout's final status, given to `onSettled`. */
export interface PayoutSettlement {
  /** The payout's `reference_id`. */
  readonly referenceId: string;
  /** The amount staged, as it was given (`'250.00'`). */
  readonly amount: string;
  /** `succeeded` for SUCCESS; `failed` for any other final status (FAILED, and the rare EXPIRED, CANCELLED, REFUNDED). */
  readonly state: 'succeeded' | 'failed';
  /** The status the service reported. */
  readonly status: string;
  /** The service's id of the withdrawal. */
  readonly paymentId: string;
  /** Whether the callback or the worker's status lookup brought it. */
  readonly via: 'callback' | 'status';
}

/** Options of {@link SqlPayouts}. */
export interface SqlPayoutsOptions<Tx> {
  /**
   * The outbox's table: an identifier, or `schema.table`, each `[a-z_][a-z0-9_]{0,62}` and not a
   * common SQL reserved word such as `order`, the table's own name at most 53 characters (the
   * outbox adds `_pace` and `_requested` to it); anything else is a ConfigurationError.
   * It holds each payout's request, account number included (a resend needs the same params).
   *
   * @default 'myr_payouts'
   * @example
   * ```ts
   * new SqlPayouts(fromPg(pool), { table: 'payments.payouts', onRefused, onSettled });
   * ```
   */
  table?: string | undefined;
  /**
   * How long, in ms, a statement waits for a row another transaction holds.
   *
   * @default 5000
   * @example
   * ```ts
   * new SqlPayouts(fromPg(pool), { lockTimeoutMs: 2_000, onRefused, onSettled });
   * ```
   */
  lockTimeoutMs?: number | undefined;
  /**
   * Runs once when the service refuses a payout for good, in the transaction that moves it to
   * `refused` (credit the seller back through `tx`). If it throws, that transaction rolls back;
   * the payout is not sent again, and the hook runs again on a later drain.
   *
   * @example
   * ```ts
   * onRefused: async (refusal, { tx }) => {
   *   await tx.query('UPDATE wallets SET balance = balance + $1 WHERE payout = $2', [refusal.amount, refusal.referenceId]);
   * }
   * ```
   */
  onRefused: (refusal: PayoutRefusal, context: { readonly tx: Tx }) => unknown;
  /**
   * Runs once with the payout's final status, in the transaction that moves it to `succeeded` or
   * `failed` (the callback's, through `settle`, or the worker's after a status lookup). If it
   * throws, that transaction rolls back and the payout stays as it was.
   *
   * @example
   * ```ts
   * onSettled: async (settlement, { tx }) => {
   *   if (settlement.state === 'failed') await creditBack(tx, settlement.referenceId, settlement.amount);
   * }
   * ```
   */
  onSettled: (settlement: PayoutSettlement, context: { readonly tx: Tx }) => unknown;
}

/** What {@link SqlPayouts.get} tells about one payout (never its account number). */
export interface PayoutInfo {
  /** The payout's `reference_id`. */
  readonly referenceId: string;
  /** `staged` → `sending` → `sent` → `succeeded` | `failed`, or `refused`. */
  readonly state: PayoutState;
  /** The service's id, once an answer or a status carried it. */
  readonly paymentId?: string;
  /** Requests made for it so far (a resend with the same reference counts). */
  readonly attempts: number;
  /** The last failure's code and message (the account number masked). */
  readonly lastError?: string;
}

/** What {@link SqlPayouts.settle} did with a withdrawal callback. */
export type PayoutSettleResult = 'settled' | 'already' | 'unknown';
