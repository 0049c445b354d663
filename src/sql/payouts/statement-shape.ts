/**
 * The shape every dialect's payout SQL takes (`src/sql/dialects/<dialect>/payout-statements.ts`):
 * each statement's text and its parameter builder side by side, typed together, so a statement
 * and its parameters cannot drift apart. The table's name (checked by `checkTableName`) is the
 * only text put into SQL; every value is a parameter.
 *
 * @module
 */
import { REFERENCE_ID_MAX_LENGTH } from '../../schemas/common.js';
import type { CheckedTable } from '../ensure-schema.js';

/** One statement: its text for a table, and its parameters, in placeholder order, from named values. */
export interface PayoutStatement<A> {
  readonly text: (table: string) => string;
  readonly params: (values: A) => readonly unknown[];
}

/** A payout's states, as stored. */
export type PayoutState = 'staged' | 'sending' | 'sent' | 'succeeded' | 'failed' | 'refused';

/** Every state a row may hold. */
export const PAYOUT_STATES: readonly PayoutState[] = ['staged', 'sending', 'sent', 'succeeded', 'failed', 'refused'];

/**
 * The most characters the outbox writes into each of its bounded text columns, for every
 * dialect's DDL and `ensureSchema`'s check alike: a narrower column would refuse or cut them.
 */
export const WRITTEN = {
  /** The longest reference the service accepts. */
  reference_id: REFERENCE_ID_MAX_LENGTH,
  /** The longest state's name. */
  state: Math.max(...PAYOUT_STATES.map((state) => state.length)),
  /** The amount as staged. */
  amount: 32,
  /** The service's withdrawal id: the spec bounds none, so the width the DDL gives it. */
  payment_id: 128,
  /** A failure's code and message, the message cut to 400 characters (`errorText` in rows.ts). */
  last_error: 500,
} as const;

/**
 * The most bytes of the staged request's JSON (`params`): what MySQL's TEXT holds, the narrowest
 * column any dialect gives it. The JSON is written in ASCII (`\uXXXX` for anything else), so it is
 * as many bytes as characters whatever the column's character set.
 */
export const PARAMS_MAX_BYTES = 65_535;

/** What {@link PayoutStatements.release} is given. */
type ReleaseValues = Parameters<PayoutStatements['release']['params']>[0];

/**
 * The release's values in the order of numbered placeholders (`$1`…`$9` on Postgres, `?1`…`?9`
 * on SQLite): both dialects' release text number them alike, so one list serves both.
 */
export const numberedReleaseParams = (a: ReleaseValues): readonly unknown[] => [
  a.referenceId,
  a.claimId,
  a.state,
  a.dueAt,
  a.paymentId,
  a.lastError,
  a.refusal,
  a.now,
  a.answeredAt,
];

/** The payout SQL of one dialect. */
export interface PayoutStatements {
  /** The table and its index, `IF NOT EXISTS`; `bare` is the table's name without its schema. */
  readonly schema: (table: string, bare: string) => readonly string[];
  /** The tables `schema` makes (the payouts' and the pace's), as `ensureSchema` checks them. */
  readonly tables: (table: string, bare: string) => readonly CheckedTable[];
  /** Records a staged payout; answers 0 rows when its reference is there already (no error, so the merchant's transaction stays usable). */
  readonly stage: PayoutStatement<{ referenceId: string; params: string; amount: string; now: number }>;
  /** Rows due for a send or a status lookup, oldest first, locked for this transaction where the database can skip locked rows. */
  readonly due: PayoutStatement<{ now: number; limit: number }>;
  /** Claims one due row for this worker (its `claim_id`, a lease until `until`); `requestedAt` when a request will be sent. */
  readonly claim: PayoutStatement<{
    referenceId: string;
    state: PayoutState;
    claimId: number;
    until: number;
    attempt: 0 | 1;
    requestedAt: number | null;
  }>;
  /** Locks the table's one pacing row: claims that will send take turns, so the requests of every worker fit one limit. */
  readonly paceLock: PayoutStatement<Record<string, never>>;
  /**
   * How many payouts were requested after `since` and no later than `until`, and the oldest of
   * them (`n`, `oldest`). A time past `until` is no request this outbox made (it writes its own
   * clock's time, and `until` allows for another worker's clock being ahead): counted, it would
   * hold every payout back until then.
   */
  readonly recent: PayoutStatement<{ since: number; until: number }>;
  /**
   * Writes a request's outcome, only if the row is still this worker's claim and still in flight
   * (`sending` or `sent`): a row settled meanwhile, by a callback or by hand, stays as it is.
   */
  readonly release: PayoutStatement<{
    referenceId: string;
    claimId: number;
    state: PayoutState;
    dueAt: number;
    paymentId: string | null;
    lastError: string | null;
    refusal: string | null;
    now: number;
    /**
     * When the service's answer to this claim's request came (null when the claim sent none): the
     * pace counts the request from then, a time the service had surely counted it by.
     */
    answeredAt: number | null;
  }>;
  /** Moves a payout to its final status by callback, only from `sending` or `sent`. */
  readonly settle: PayoutStatement<{
    referenceId: string;
    state: 'succeeded' | 'failed';
    paymentId: string;
    now: number;
  }>;
  /** One payout's row, locked for this transaction (SQLite: the transaction holds the write lock). */
  readonly lock: PayoutStatement<{ referenceId: string }>;
  /** One payout's row, without a lock. */
  readonly read: PayoutStatement<{ referenceId: string }>;
  /** Sets aside a row the outbox cannot read (not due again before `dueAt`), saying why in `last_error`. */
  /** Sets aside a row the outbox cannot read; its key as read (SQLite may hold NULL or a blob in it). */
  readonly park: PayoutStatement<{ referenceId: string | null | Uint8Array; dueAt: number; lastError: string }>;
}

/** The columns `due`, `lock` and `read` answer. */
export const COLUMNS = 'reference_id, state, params, amount, attempts, payment_id, last_error, refusal, staged_at';
