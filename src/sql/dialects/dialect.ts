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
}

/** What writing a payment's mark is given. */
export interface MarkArgs {
  readonly mark: string;
  readonly markRank: number;
  readonly expiresAt: number;
  readonly now: number;
}

/**
 * How a dialect claims a callback with a place in its payment's life (the ledger's path is chosen
 * by this name, see `ledger/sql-ledger.ts`):
 * - `mark-in-claim` (Postgres): one statement writes the payment's mark and claims the key (a CTE).
 * - `mark-then-claim` (SQLite): `lockMark` writes the mark, then the claim reads it.
 * - `rows-beside` (MySQL): a status that does not raise the mark inserts the mark's and the key's
 *   rows in one statement (`claimBeside`); otherwise, and when that cannot tell whose the key's row
 *   is, `lockMark` then the claim. MySQL's claims never take over an expired row: `takeOver` does.
 */
export type ClaimPath =
  | { readonly name: 'mark-in-claim' }
  | { readonly name: 'mark-then-claim'; readonly lockMark: Statement<MarkArgs> }
  | {
      readonly name: 'rows-beside';
      readonly lockMark: Statement<MarkArgs>;
      /** Both rows, the mark's first; 2 affected rows: both new, so claimed and nothing supersedes it. */
      readonly claimBeside: Statement<OrderedClaimArgs>;
      /** Takes over an expired row the claim found, with the run's id; 1 affected row: claimed. */
      readonly takeOver: Statement<ClaimArgs>;
    };

/** The ledger's statements of one dialect, for one table. */
export interface LedgerStatements {
  /** DDL, in order; idempotent. */
  readonly schema: readonly string[];
  /** Reads `claim_id` from no row: fails with the database's "no such column" on a table an earlier build made. */
  readonly probe: string;
  /** Inserts the key's row if absent (or expired, except on MySQL), with the run's id; 1 affected row: claimed. */
  readonly claim: Statement<ClaimArgs>;
  /**
   * Claims the key only if the payment's live mark is not above the callback's rank; 0 affected
   * rows: a duplicate or superseded (told apart by `readMark`, off the common path).
   */
  readonly claimOrdered: Statement<OrderedClaimArgs>;
  /** The path of a callback with a place in its payment's life on this dialect. */
  readonly claimPath: ClaimPath;
  /** The live mark's rank, or no row. */
  readonly readMark: Statement<{ readonly mark: string; readonly now: number }>;
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
  /** "No such column", as `code` or `errno` values. */
  readonly noSuchColumn: readonly (string | number)[];
}
