/**
 * A payout's row as the outbox reads it, and what of it may be shown: the stored request (which
 * holds the full account number, for a resend) is parsed only to be sent again; everything that
 * leaves the outbox (`get`, the hooks' arguments, `last_error`) holds the account number masked.
 *
 * @module
 */
import { getRandomValues } from 'node:crypto';
import { MyrGatewayError } from '../../core/errors/base.js';
import { accountNumberRedactor } from '../../core/redact.js';
import * as z from 'zod/mini';
import { withdrawalCreateParamsSchema, type WithdrawalCreateParams } from '../../schemas/withdrawals.js';
import { isRecord } from '../adapters/adapter-options.js';
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
  /**
   * The request as staged (full account number: only for sending it again), read while the payout
   * is `staged` or `sending`; undefined once it is `sent` or final (never sent again).
   */
  readonly params: WithdrawalCreateParams | undefined;
  /** The account number the stored request names (masked out of every error kept), or undefined. */
  readonly accountNumber: string | undefined;
  readonly amount: string;
  readonly attempts: number;
  readonly paymentId: string | undefined;
  readonly lastError: string | undefined;
  /** The refusal recorded when `onRefused` threw: run again, never sent again. */
  readonly refusal: { readonly code: string; readonly message: string } | undefined;
  /** When it was staged (ms since the epoch, the staging process's clock). */
  readonly stagedAt: number;
}

/**
 * Why a row is not one the outbox can act on: shared state is input, so a row the outbox did not
 * write (by hand, another program, a bad migration) is refused with what is wrong, and never with
 * its text (its params hold a full account number). The worker sets such a row aside and sends
 * the others; `get` and `settle` throw it.
 *
 * @example
 * ```ts
 * worker.start(); // onError: MyrGatewayError PAYOUT_ROW_INVALID "the payout row PAYOUT7781 ..."
 * ```
 */
export function rowInvalid(referenceId: string, what: string): MyrGatewayError {
  return new MyrGatewayError(
    `the payout row ${referenceId.slice(0, 100)} is not one the outbox wrote: ${what}; it is set aside (never sent) and reported again each hour until a person fixes or deletes it`,
    { code: 'PAYOUT_ROW_INVALID', retryable: false, referenceId: referenceId.slice(0, 100) },
  );
}

/** A row's key as a message names it: its text, or what it is when it is not text (SQLite keeps NULL or a blob in a TEXT key). */
export const keyText = (key: unknown): string =>
  typeof key === 'string' ? key : key === null || key === undefined ? 'NULL' : 'a blob';

/** More requests than any payout is asked (one a minute for 1,900 years): a value past it was not the outbox's, and `+ 1` must fit an INT. */
const MAX_ATTEMPTS = 1_000_000_000;

const text = (value: unknown): string | undefined =>
  typeof value === 'string'
    ? value
    : typeof value === 'number' || typeof value === 'bigint'
      ? String(value)
      : undefined;
/** `value` parsed as JSON, or undefined when it is not JSON text. */
function jsonOf(value: unknown): unknown {
  try {
    return typeof value === 'string' ? (JSON.parse(value) as unknown) : undefined;
  } catch {
    return undefined;
  }
}

/** Whether `value` is a withdrawal request the outbox could have staged for this reference and amount. */
const isRequestFor = (value: unknown, referenceId: string, amount: string): value is WithdrawalCreateParams =>
  isRecord(value) &&
  value.reference_id === referenceId &&
  String(value.amount) === amount &&
  z.safeParse(withdrawalCreateParamsSchema, value).success;

/** A row of `due`, `lock` or `read`; a {@link rowInvalid} error when it is not one the outbox wrote. */
export function payoutRow(row: Record<string, unknown>): PayoutRow {
  const key = row.reference_id;
  // A NULL or a blob (SQLite keeps them in a TEXT key) is no reference: read as "null" it would name another payout.
  if (typeof key !== 'string') throw rowInvalid(keyText(key), 'its reference_id is not text');
  const referenceId = key;
  const state = PAYOUT_STATES.find((known) => known === row.state);
  if (state === undefined) throw rowInvalid(referenceId, 'its state is none the outbox writes');
  const amount = String(row.amount);
  // Only a payout still to be asked (staged, or claimed and maybe sent) needs its request: a sent or
  // final one is looked up, settled or read by its reference, state and amount alone.
  let params: WithdrawalCreateParams | undefined;
  if (state === 'staged' || state === 'sending') {
    const stored = jsonOf(row.params);
    if (!isRequestFor(stored, referenceId, amount))
      throw rowInvalid(referenceId, "its params are not the request staged for this row's reference and amount");
    params = stored;
  }
  const loose = params ?? jsonOf(row.params);
  const accountNumber = isRecord(loose) && typeof loose.account_number === 'string' ? loose.account_number : undefined;
  const refusalText = text(row.refusal);
  const refusal = refusalText === undefined ? undefined : jsonOf(refusalText);
  if (
    refusalText !== undefined &&
    !(isRecord(refusal) && typeof refusal.code === 'string' && typeof refusal.message === 'string')
  ) {
    throw rowInvalid(referenceId, 'its refusal is not one the outbox recorded');
  }
  // Whole numbers the outbox wrote: one at its column's edge would overflow the claim's `+ 1`.
  const attempts = Number(row.attempts);
  if (!Number.isSafeInteger(attempts) || attempts < 0 || attempts >= MAX_ATTEMPTS)
    throw rowInvalid(referenceId, `its attempts is not a whole number from 0 to ${MAX_ATTEMPTS - 1}`);
  const stagedAt = Number(row.staged_at);
  if (!Number.isSafeInteger(stagedAt)) throw rowInvalid(referenceId, 'its staged_at is not a time in ms');
  return {
    referenceId,
    state,
    params,
    accountNumber,
    amount,
    attempts,
    paymentId: text(row.payment_id),
    lastError: text(row.last_error),
    // Cut as `errorText` cuts what the outbox records, so its `last_error` fits.
    refusal: isRecord(refusal)
      ? { code: String(refusal.code).slice(0, 64), message: String(refusal.message).slice(0, 400) }
      : undefined,
    stagedAt,
  };
}

/** What a failed request left to remember: its code and message, the account number masked, at most 500 characters. */
export function errorText(
  error: unknown,
  accountNumber: string | undefined,
): { readonly code: string; readonly message: string } {
  const { code, message } =
    typeof error === 'object' && error !== null ? (error as { code?: unknown; message?: unknown }) : {};
  const mask =
    accountNumber === undefined || accountNumber === '' ? (text: string) => text : accountNumberRedactor(accountNumber);
  // A code is a short word; a longer one (not the service's) is cut, so `last_error` fits its 500.
  const known = typeof code === 'string' ? code.slice(0, 64) : 'UNKNOWN';
  const said = mask(typeof message === 'string' ? message : String(error));
  // The SDK's messages often begin with their code already: `last_error` says it once.
  return { code: known, message: (said.startsWith(`${known}: `) ? said.slice(known.length + 2) : said).slice(0, 400) };
}

/** A random 53-bit id for one claim of a row: only the worker that wrote it writes the row's outcome. */
export function claimId(): number {
  const [high, low] = getRandomValues(new Uint32Array(2));
  return ((high ?? 0) & 0x1f_ffff) * 2 ** 32 + (low ?? 0);
}
