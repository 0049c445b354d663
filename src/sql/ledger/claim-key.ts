/**
 * How a run takes its key in its transaction, on the path its dialect names (`ClaimPath` in
 * dialects/dialect.ts), and why a claim is refused: a duplicate (the key's record, or the
 * status's bit in the payment's row, kept for good) or superseded (a later status of the payment
 * was handled).
 *
 * @module
 */
import { MyrGatewayError } from '../../core/errors/base.js';
import type { PaymentOrder } from '../../webhooks/stores/types.js';
import { canSupersede, lifecycleRank, supersedesNothing } from '../../webhooks/lifecycle.js';
import { paymentKey, paymentOfKey } from '../../webhooks/payment-key.js';
import type { LedgerStatements, Statement } from '../dialects/dialect.js';
import type { SqlSession } from '../sql-client.js';
import { keyRow, markRow, type Claim } from './claims.js';
import { handledBit, KEPT_FOR_GOOD } from './handled-statuses.js';

/** The mark a status that does not raise it writes: the payment's row, for its lock, superseding nothing. */
const LOCK_ONLY_RANK = supersedesNothing();

/** Sends one of the dialect's statements with its parameters. */
export const send = <A>(session: SqlSession<unknown>, statement: Statement<A>, args: A) =>
  session.query(statement.text, statement.params(args));

/**
 * The bit a run records in its payment's row, kept for good: its status's, when the run is that
 * payment outcome's (its key is `paymentKey(payment_id, status)`: the handler's default
 * idempotency, a reconciliation's `runOnce`; the status is read from that key); none for a run
 * keyed otherwise (`idempotency: 'webhook'`, one run per delivery id: two REFUNDED deliveries of
 * one payment both run), nor for a status the spec does not name.
 */
function keptForGood(key: string, { paymentId }: PaymentOrder): number {
  const outcomeOf = paymentKey(paymentId, '');
  return key.startsWith(outcomeOf) ? handledBit(key.slice(outcomeOf.length)) : 0;
}

/**
 * The payment a run keeps and whether it raises the payment's mark: as given, or else, when its
 * key has exactly {@link paymentKey}'s shape and no `order` is given, the payment and status the key
 * names, raising the mark for a status that can supersede (a REFUNDED), as `runOnce` does. So a run
 * under a payment outcome's key is that outcome's, whoever runs it: kept for good, and a
 * REFUNDED run directly through `SqlLedger.run` supersedes the payment's later SUCCESS too.
 */
export function paymentOfRun(
  key: string,
  order: PaymentOrder | undefined,
  raiseMark: boolean,
): { readonly order: PaymentOrder | undefined; readonly raiseMark: boolean } {
  const named = order === undefined ? paymentOfKey(key) : undefined;
  if (named === undefined) return { order, raiseMark };
  return {
    order: { paymentId: named.payment_id, rank: lifecycleRank(named.status) },
    raiseMark: raiseMark || canSupersede(named.status),
  };
}

/**
 * The row a run claims. A payment outcome's run (its status has a bit) on a dialect that claims
 * there (`claimPayment`) takes its payment's row alone: that row, kept for good, already says the
 * outcome was handled, and its lock orders the payment's callbacks, so a key's row beside it would
 * add a write and say nothing more. Only on a client that checks in COMMIT's round trip that its
 * transaction is still the ledger's (`commitChecked`: node-postgres, postgres.js): the ORMs check
 * instead that the claimed row still holds the run's `claim_id`, and once work that committed
 * through `tx` let the payment's row go, its next status claims that row with an id of its own.
 * Every other run claims its key's row.
 */
export function claimRowOf(
  sql: LedgerStatements,
  key: string,
  order: PaymentOrder | undefined,
  commitChecked: boolean,
): string {
  return order !== undefined && commitChecked && sql.claimPath.name === 'mark-in-claim' && keptForGood(key, order) !== 0
    ? markRow(order.paymentId)
    : keyRow(key);
}

/** A claim that could not tell whether the key's row is its own: claimed again, in two statements. */
export const UNCLEAR = Symbol('unclear');

/** What one claim is given. `beside`: the `rows-beside` path may try its one-statement claim first. */
export interface ClaimRequest {
  /** The idempotency key the run claims. */
  readonly key: string;
  readonly claim: Claim;
  readonly now: number;
  readonly order: PaymentOrder | undefined;
  readonly raiseMark: boolean;
  readonly beside: boolean;
}

/**
 * Takes the key in this transaction; answers why not otherwise. A callback with a place in its
 * payment's life writes the payment's row, kept for good: its mark (raised to its rank when
 * `raiseMark`, else written at the rank that supersedes nothing) and the bit of its status,
 * committed with the work. A status whose bit is set is a duplicate at any age, long after its
 * key's own record expired. Writing the row locks it until COMMIT (except on SQLite, one writer
 * at a time): one payment's ordered callbacks run one at a time, and each claim reads what its
 * predecessor committed. The dialect names its path (`ClaimPath` in dialects/dialect.ts): one
 * statement on the common path where it can. The reason for a refusal is read only then.
 */
export async function claimKey(
  session: SqlSession<unknown>,
  sql: LedgerStatements,
  { key, claim, now, order, raiseMark, beside }: ClaimRequest,
): Promise<'duplicate' | 'superseded' | typeof UNCLEAR | undefined> {
  if (order === undefined) {
    if ((await send(session, sql.claim, { claim, now })).affected === 1) return undefined;
    return takeOver(session, sql, claim, now);
  }
  const args = {
    claim,
    now,
    mark: markRow(order.paymentId),
    rank: order.rank,
    markRank: raiseMark ? order.rank : LOCK_ONLY_RANK,
    handled: keptForGood(key, order),
    keptUntil: KEPT_FOR_GOOD,
  };
  const path = sql.claimPath;
  switch (path.name) {
    case 'mark-in-claim': {
      // The claim's row is the payment's when claimRowOf chose it (a key's row never is: its
      // prefix differs): then the claim writes that row alone.
      const statement = claim.row === args.mark ? path.claimPayment : sql.claimOrdered;
      if ((await send(session, statement, args)).affected === 1) return undefined;
      return (await refusal(session, sql, args)) ?? 'duplicate';
    }
    case 'claim-then-mark':
      if ((await send(session, sql.claimOrdered, args)).affected !== 1)
        return (await refusal(session, sql, args)) ?? 'duplicate';
      await send(session, path.markClaimed, args);
      return undefined;
    case 'rows-beside': {
      if (beside && !raiseMark) {
        const inserted = (await send(session, path.claimBeside, args)).affected;
        // Both rows new: nothing marked the payment, so nothing supersedes the callback.
        if (inserted === 2) return undefined;
        const refused = await refusal(session, sql, args);
        if (refused !== undefined) return refused;
        // One: the payment's or the key's. Neither: the key's row was there; a live one is a
        // duplicate. Both go again the two-statement way, which locks the payment's row for
        // writing: an existing one is only share-locked here, which another status of the
        // payment (taking over its own expired record) would share, and run beside this one.
        if (inserted === 0 && (await takeOver(session, sql, claim, now)) === 'duplicate') return 'duplicate';
        return UNCLEAR;
      }
      await send(session, path.lockMark, args);
      if ((await send(session, sql.claimOrdered, args)).affected !== 1) {
        const refused = await refusal(session, sql, args);
        if (refused !== undefined) return refused;
        if ((await takeOver(session, sql, claim, now)) === 'duplicate') return 'duplicate';
      }
      if (args.handled !== 0) await send(session, path.markHandled, args);
      return undefined;
    }
  }
}

/**
 * Why the payment's row (as last committed, and locked by the claim) refuses the callback: a
 * later status was handled (`superseded`), or this one was (`duplicate`); undefined when neither.
 * A row the ledger did not write (SQLite keeps text in an INTEGER column) is no answer: it throws,
 * so the run is `unavailable` (503, onError) until a person fixes the row, never a duplicate.
 */
async function refusal(
  session: SqlSession<unknown>,
  sql: LedgerStatements,
  { mark, rank, handled }: { readonly mark: string; readonly rank: number; readonly handled: number },
): Promise<'superseded' | 'duplicate' | undefined> {
  const row = (await send(session, sql.readMark, { mark })).rows[0];
  if (row === undefined) return undefined;
  const markRank = row.mark_rank === null ? null : wholeNumber(row.mark_rank, 'mark_rank');
  if (markRank !== null && markRank > rank) return 'superseded';
  return (wholeNumber(row.handled_statuses, 'handled_statuses') & handled) !== 0 ? 'duplicate' : undefined;
}

/**
 * `value` of a payment's row, read as the whole number the ledger writes there (a driver may
 * answer a BIGINT as a string or a bigint); anything else is refused, naming the column and never
 * the value (the row is input: it may hold anything).
 */
function wholeNumber(value: unknown, column: 'mark_rank' | 'handled_statuses'): number {
  if (typeof value === 'number' && Number.isSafeInteger(value)) return value;
  // A bigint past 2^53 (a driver's, or node:sqlite's for a value it cannot read as a number) is no rank the ledger wrote.
  if (
    (typeof value === 'bigint' &&
      value <= BigInt(Number.MAX_SAFE_INTEGER) &&
      value >= -BigInt(Number.MAX_SAFE_INTEGER)) ||
    (typeof value === 'string' && /^-?\d{1,15}$/.test(value))
  )
    return Number(value);
  const what =
    typeof value === 'number'
      ? 'not a whole number'
      : typeof value === 'string'
        ? 'text'
        : typeof value === 'object' && value !== null
          ? 'a blob'
          : typeof value;
  throw new MyrGatewayError(
    `a payment's row holds a ${column} the ledger did not write (${what}): fix or delete that row (ledger_key 'm:' and the payment's id) by hand`,
    { code: 'STORE_UNAVAILABLE', retryable: false },
  );
}

/** The key's row exists: claimed when it had expired (`rows-beside` takes it over here; the others in the claim), else a duplicate. */
async function takeOver(
  session: SqlSession<unknown>,
  sql: LedgerStatements,
  claim: Claim,
  now: number,
): Promise<'duplicate' | undefined> {
  const path = sql.claimPath;
  if (path.name === 'rows-beside' && (await send(session, path.takeOver, { claim, now })).affected === 1)
    return undefined;
  return 'duplicate';
}
