/**
 * A payout's row as the outbox reads it, and what of it may be shown: the stored request (which
 * holds the full account number, for a resend) is parsed only to be sent again; everything that
 * leaves the outbox (`get`, the hooks' arguments, `last_error`) holds the account number masked.
 *
 * @module
 */
import { getRandomValues } from 'node:crypto';
import { accountNumberRedactor } from '../../core/redact.js';
import type { WithdrawalCreateParams } from '../../schemas/withdrawals.js';
import type { SqlDialect } from '../sql-client.js';
import { payoutStatements as mysql } from '../dialects/mysql/payout-statements.js';
import { payoutStatements as postgres } from '../dialects/postgres/payout-statements.js';
import { payoutStatements as sqlite } from '../dialects/sqlite/payout-statements.js';
import { PAYOUT_STATES, type PayoutState, type PayoutStatements } from './statement-shape.js';

/** The payout statements of `dialect`. */
export const payoutStatementsOf = (dialect: SqlDialect): PayoutStatements => ({ postgres, mysql, sqlite })[dialect];

/** One payout as stored. */
export interface PayoutRow {
  readonly referenceId: string;
  readonly state: PayoutState;
  /** The request as staged (full account number: only for sending it again). */
  readonly params: WithdrawalCreateParams;
  readonly amount: string;
  readonly attempts: number;
  readonly paymentId: string | undefined;
  readonly lastError: string | undefined;
  /** The refusal recorded when `onRefused` threw: run again, never sent again. */
  readonly refusal: { readonly code: string; readonly message: string } | undefined;
}

const stateOf = (value: unknown): PayoutState => {
  const state = PAYOUT_STATES.find((known) => known === value);
  if (state === undefined) throw new Error(`a payout row holds the unknown state ${String(value)}`);
  return state;
};
const text = (value: unknown): string | undefined =>
  typeof value === 'string'
    ? value
    : typeof value === 'number' || typeof value === 'bigint'
      ? String(value)
      : undefined;

/** A row of `due`, `lock` or `read`. */
export function payoutRow(row: Record<string, unknown>): PayoutRow {
  const refusal = text(row.refusal);
  return {
    referenceId: String(row.reference_id),
    state: stateOf(row.state),
    params: JSON.parse(String(row.params)) as WithdrawalCreateParams,
    amount: String(row.amount),
    attempts: Number(row.attempts),
    paymentId: text(row.payment_id),
    lastError: text(row.last_error),
    refusal: refusal === undefined ? undefined : (JSON.parse(refusal) as { code: string; message: string }),
  };
}

/** What a failed request left to remember: its code and message, the account number masked, at most 500 characters. */
export function errorText(error: unknown, accountNumber: string): { readonly code: string; readonly message: string } {
  const { code, message } =
    typeof error === 'object' && error !== null ? (error as { code?: unknown; message?: unknown }) : {};
  const mask = accountNumberRedactor(accountNumber);
  return {
    code: typeof code === 'string' ? code : 'UNKNOWN',
    message: mask(typeof message === 'string' ? message : String(error)).slice(0, 400),
  };
}

/** A random 53-bit id for one claim of a row: only the worker that wrote it writes the row's outcome. */
export function claimId(): number {
  const [high, low] = getRandomValues(new Uint32Array(2));
  return ((high ?? 0) & 0x1f_ffff) * 2 ** 32 + (low ?? 0);
}
