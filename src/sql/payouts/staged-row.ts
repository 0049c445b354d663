/**
 * What `stage` writes for a validated request, and the refusal when the table cannot hold it
 * whole: a column that is too narrow refuses the value on Postgres, and on MySQL, whose
 * `INSERT IGNORE` keeps a duplicate from failing the merchant's transaction, cuts it. A payout cut
 * that way is debited and never paid, so it is refused before anything is written.
 *
 * @module
 */
import { InvalidRequestError } from '../../core/errors/base.js';
import type { WithdrawalCreateParams } from '../../schemas/withdrawals.js';
import { PARAMS_MAX_BYTES, WRITTEN } from './statement-shape.js';

/** The values of a staged row. */
export interface StagedRow {
  readonly referenceId: string;
  /** The request's JSON, in ASCII: `\uXXXX` for every other character, so any character set keeps it. */
  readonly params: string;
  readonly amount: string;
  readonly now: number;
}

/** JSON with every character past ASCII escaped (JSON.parse gives the same request back). */
const asciiJson = (value: unknown): string =>
  JSON.stringify(value).replace(/[\u007f-\uffff]/g, (char) => `\\u${char.charCodeAt(0).toString(16).padStart(4, '0')}`);

/** The request's field whose value is longest in the JSON: the one to shorten. */
function longestField(request: WithdrawalCreateParams): string {
  let longest = 'account_name';
  let length = -1;
  for (const [field, value] of Object.entries(request)) {
    const size = asciiJson(value).length;
    if (size > length) [longest, length] = [field, size];
  }
  return longest;
}

const tooLong = (field: string, why: string, referenceId: string): InvalidRequestError =>
  new InvalidRequestError(`VALIDATION_ERROR: withdrawal rejected before staging: ${field} ${why}`, {
    code: 'VALIDATION_ERROR',
    field,
    referenceId,
  });

/**
 * The row `stage` writes for `request` (validated), or an `InvalidRequestError` naming the field
 * when the table cannot hold it whole: an amount longer than its column (32 characters), or a
 * request whose JSON is longer than {@link PARAMS_MAX_BYTES}. Never the values in the message.
 *
 * @example
 * ```ts
 * stagedRow({ amount: '250.00', reference_id: 'PAYOUT7781', bank_code: 'PBBEMYKL', account_number: '5140123456789', account_name: '陈伟明', currency: 'MYR', method: 'BANK' }, Date.now());
 * // params: '{"amount":"250.00",…,"account_name":"\u9648\u4f1f\u660e",…}'
 * ```
 */
export function stagedRow(request: WithdrawalCreateParams, now: number): StagedRow {
  const referenceId = request.reference_id;
  const row = { referenceId, params: asciiJson(request), amount: String(request.amount), now };
  if (row.amount.length > WRITTEN.amount)
    throw tooLong('amount', `is longer than ${WRITTEN.amount} characters`, referenceId);
  if (row.params.length > PARAMS_MAX_BYTES)
    throw tooLong(longestField(request), `makes the request longer than ${PARAMS_MAX_BYTES} bytes`, referenceId);
  return row;
}
