/**
 * What a dialect module holds, the one place each SQL database's knowledge lives (pg-boss's
 * `plans.js` is the model): every statement the ledger sends, its text and the builder of its
 * parameters side by side and typed together; how a run's transaction opens, bounds its lock waits
 * and ends; the isolation level the claims need; and which of the database's error codes mean what.
 * Adapters (`adapters/<driver>/`) read their dialect and send what it says; the ledger reads the
 * claim path a dialect names ({@link ClaimPath}) instead of testing which statements exist.
 *
 * @module
 */
import type { Claim } from '../ledger/claims.js';
import type { ColumnDifference, TableColumn } from '../schema-check.js';

/** The three SQL dialects the ledger writes. */
export type SqlDialect = 'postgres' | 'mysql' | 'sqlite';

/**
 * One parameterised statement: its text, with the dialect's placeholders, and the function that
 * lays out its parameters in placeholder order, typed by what the statement needs.
 */
export interface Statement<A> {
  /** The SQL; the table's checked name is the only text put into it. */
  readonly text: string;
  /** The parameters for `args`, in the order the text's placeholders take them. */
  readonly params: (args: A) => readonly unknown[];
}

/** What a claim statement is given: the run's claim and the time it started. */
export interface ClaimArgs {
  readonly claim: Claim;
  readonly now: number;
}

/** What the claim of a callback with a place in its payment's life is given. */
export interface OrderedClaimArgs extends ClaimArgs {
  /** The row of the payment's mark. */
  readonly mark: string;
  /** The callback's rank in its payment's life. */
  readonly rank: number;
  /** What the claim writes into the mark: `rank` when its status raises the mark, else the rank that supersedes nothing. */
  readonly markRank: number;
  /** The status's bit in the payment's `handled_statuses` (0: a status the spec does not name, never recorded there). */
  readonly handled: number;
  /** The expiry of the payment's row: never (`KEPT_FOR_GOOD`). */
  readonly keptUntil: number;
}

/** What writing a payment's row is given. */
export type MarkArgs = Pick<OrderedClaimArgs, 'mark' | 'markRank' | 'handled' | 'keptUntil'>;

/**
 * How a dialect claims a callback with a place in its payment's life (the ledger's path is chosen
 * by this name, see `ledger/sql-ledger.ts`). Every path records the status's bit in the payment's
 * row, kept for good, in the run's transaction, and refuses a status whose bit is set:
 * - `mark-in-claim` (Postgres): one statement writes the payment's row and claims the key (a CTE);
 *   a payment outcome's run (a status with a bit) on a client that checks its transaction in
 *   COMMIT (node-postgres, postgres.js) claims in the payment's row alone (`claimPayment`): that
 *   row, kept for good, already says the outcome was handled, so no key's row is written beside
 *   it (`claimRowOf` in ledger/claim-key.ts says why the other clients keep theirs).
 * - `claim-then-mark` (SQLite, one writer at a time, so no lock to take first): the claim reads the
 *   payment's row, then `markClaimed` writes it.
 * - `rows-beside` (MySQL): a status that does not raise the mark inserts the payment's and the
 *   key's rows in one statement (`claimBeside`); otherwise, and when that cannot tell whose the
 *   key's row is, `lockMark` writes (and locks) the payment's row, the claim reads it, and
 *   `markHandled` records the bit. MySQL's claims never take over an expired row: `takeOver` does.
 */
export type ClaimPath =
  | {
      readonly name: 'mark-in-claim';
      /**
       * Claims a payment outcome's run in the payment's row alone: sets its status's bit, its
       * mark and the run's id (`claim_id`), only if that bit is clear and no later status was
       * handled; 1 affected row: claimed. Sent only for clients that check their transaction in
       * COMMIT, which never send `done`: another status of the payment rewrites this row's id.
       */
      readonly claimPayment: Statement<OrderedClaimArgs>;
    }
  | { readonly name: 'claim-then-mark'; readonly markClaimed: Statement<MarkArgs> }
  | {
      readonly name: 'rows-beside';
      readonly lockMark: Statement<MarkArgs>;
      readonly markHandled: Statement<MarkArgs>;
      /** Both rows, the payment's first; 2 affected rows: both new, so claimed and nothing supersedes it. */
      readonly claimBeside: Statement<OrderedClaimArgs>;
      /** Takes over an expired row the claim found, with the run's id; 1 affected row: claimed. */
      readonly takeOver: Statement<ClaimArgs>;
    };

/** The ledger's statements of one dialect, for one table. */
export interface LedgerStatements {
  /** DDL, in order; idempotent. */
  readonly schema: readonly string[];
  /** The columns the ledger needs: `schema` creates them, `ensureSchema` checks the table has them. */
  readonly columns: readonly TableColumn[];
  /** One row per column of the table, as the database describes it (`DescribedColumn`'s names); no row: no table. */
  readonly describe: Statement<null>;
  /** The statement that adds a missing column, or gives one that differs its definition. */
  readonly fixColumn: (difference: ColumnDifference) => string;
  /** Inserts the key's row if absent (or expired, except on MySQL), with the run's id; 1 affected row: claimed. */
  readonly claim: Statement<ClaimArgs>;
  /**
   * Claims the key only if the payment's mark is not above the callback's rank and its status was
   * not handled; 0 affected rows: a duplicate or superseded (told apart by `readMark`, off the
   * common path).
   */
  readonly claimOrdered: Statement<OrderedClaimArgs>;
  /** The path of a callback with a place in its payment's life on this dialect. */
  readonly claimPath: ClaimPath;
  /** The payment's row: `mark_rank` and `handled_statuses`, or no row. */
  readonly readMark: Statement<{ readonly mark: string }>;
  /** One row while the claim is still this run's (compares the run's id, never the expiry). */
  readonly done: Statement<Claim>;
  /** Deletes at most `batch` rows expired before `before`. */
  readonly prune: Statement<{ readonly before: number; readonly batch: number }>;
}

/** The database's error codes that mean something to the ledger (database-errors.ts reads them). */
export interface DialectErrors {
  /** A lock wait that timed out, a deadlock, a serialization failure: `code` values. */
  readonly conflictCodes: readonly string[];
  /** The same, as numeric `errno` values (MySQL). */
  readonly conflictErrnos?: readonly number[] | undefined;
}
