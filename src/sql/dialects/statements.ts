/**
 * Every statement the ledger sends, per dialect: the table's name is the only text put into SQL
 * (checked by {@link checkTableName}), every value is a parameter.
 *
 * One table holds two kinds of row, told apart by the prefix of `ledger_key`: `k:<key>` is a
 * handled idempotency key, `m:<payment_id>` a payment's high-water mark (`mark_rank`). A row
 * lives until `expires_at` (ms since the epoch); an expired row is taken over as if absent and
 * removed by `prune`. A key's row also carries `claim_id`, the id of the run that last claimed it
 * (see {@link claimOf}).
 *
 * @module
 */
import { createHash, getRandomValues } from 'node:crypto';
import { ConfigurationError } from '../../core/errors/base.js';
import type { SqlDialect } from '../sql-client.js';

const IDENTIFIER = /^[A-Za-z_][A-Za-z0-9_]{0,62}$/;

/**
 * The table's name, checked: one identifier, or `schema.table`, each `[A-Za-z_][A-Za-z0-9_]{0,62}`.
 * Anything else is a ConfigurationError before any SQL is sent.
 */
export function checkTableName(table: unknown): { readonly qualified: string; readonly bare: string } {
  const parts = typeof table === 'string' ? table.split('.') : [];
  if (parts.length < 1 || parts.length > 2 || !parts.every((part) => IDENTIFIER.test(part))) {
    throw new ConfigurationError(
      'table must be an SQL identifier ([A-Za-z_][A-Za-z0-9_]{0,62}), optionally schema-qualified (schema.table); it is written into the ledger\'s SQL unquoted',
      'table',
    );
  }
  return { qualified: parts.join('.'), bare: parts.at(-1) as string };
}

/** Longest `ledger_key` stored as it is; longer ones (and those ending in a space) are stored as their SHA-256. */
const MAX_KEY_LENGTH = 255;

function rowKey(prefix: 'k:' | 'm:', value: string): string {
  const key = prefix + value;
  // MySQL's utf8mb4_bin pads with spaces (`a` = `a `): a key ending in one is stored by its hash.
  return key.length <= MAX_KEY_LENGTH && !key.endsWith(' ') ? key : `h:${createHash('sha256').update(key).digest('hex')}`;
}

/** The row of an idempotency key. */
export const keyRow = (key: string): string => rowKey('k:', key);
/** The row of a payment's high-water mark. */
export const markRow = (paymentId: string): string => rowKey('m:', paymentId);

/** One run's claim of a key: the key's row, until when the record lasts, and the run's own id. */
export interface Claim {
  readonly row: string;
  readonly until: number;
  /**
   * Written into `claim_id` by every statement that claims or takes over the row, and the only
   * thing `done` compares: whether the row is still this run's. The expiry cannot say it: a
   * duplicate that claimed the key in the same ms (after the database rolled this run's claim
   * back under its work) writes the same one.
   */
  readonly id: number;
}

// Random words drawn a batch at a time: one call to the system's generator per 128 claims.
const words = new Uint32Array(256);
let drawn = words.length;

/**
 * The claim of `key` by a run that starts at `now`: its id a random integer of 53 bits (an exact
 * JS number, and a BIGINT on every database), so two runs of one key share it with odds of 2⁻⁵³.
 */
export function claimOf(key: string, now: number, ttlMs: number): Claim {
  if (drawn >= words.length) {
    getRandomValues(words);
    drawn = 0;
  }
  const high = (words[drawn] ?? 0) & 0x1f_ffff;
  const low = words[drawn + 1] ?? 0;
  drawn += 2;
  return { row: keyRow(key), until: now + ttlMs, id: high * 0x1_0000_0000 + low };
}

/**
 * A setting only the ledger's own Postgres transactions hold (SET LOCAL, with BEGIN): gone once
 * the transaction ended, so a statement can tell it runs inside one.
 */
export const LEDGER_TX = 'myr_gateway.ledger_tx';

/**
 * The check and COMMIT of a Postgres run, in one simple query: COMMIT only while the ledger's
 * transaction is still the one open. Work that ended it on tx took the claim along, and work that
 * then began again left a transaction of its own open: COMMIT would commit its writes without the
 * claim (the redelivery, finding the key free, writes them again). Outside the ledger's
 * transaction the check fails (22P02: its text is no boolean), and Postgres skips the rest of a
 * simple query after an error, so that COMMIT is never sent; in a transaction a failed statement
 * aborted, it fails with 25P02 alike. Either leaves at most a transaction to roll back.
 */
export const CHECK_THEN_COMMIT = `SELECT CASE WHEN current_setting('${LEDGER_TX}', true) = 'on' THEN true ELSE ('myr-gateway: the ledger''s transaction is no longer open' || coalesce(current_setting('${LEDGER_TX}', true), ''))::boolean END AS held; COMMIT`;

/** Whether CHECK_THEN_COMMIT failed because the ledger's transaction was no longer the one open. */
export const notHeld = (error: unknown): boolean => typeof error === 'object' && error !== null && 'code' in error && error.code === '22P02';

/**
 * The claim's expiry, `$2`, in a claim sent before BEGIN's answer (postgres.js pipelines them): a
 * value only inside the ledger's transaction, an error outside it (NULL breaks NOT NULL, '' is not
 * a number). So when BEGIN fails and the connection lives on (a cancel, a statement_timeout), the
 * claim fails too instead of committing on its own, which would record the callback done without
 * its work (nor does it extend a payment's mark). `current_setting` is not a constant: it is read
 * at execution, never folded in planning.
 */
const GUARDED_EXPIRY = `(CASE WHEN current_setting('${LEDGER_TX}', true) = 'on' THEN $2::bigint ELSE current_setting('${LEDGER_TX}', true)::bigint END)`;

/** Reads a column added since the first build, from no row: the same text in every dialect. */
const PROBE = (table: string) => `SELECT claim_id FROM ${table} WHERE 1 = 0`;

/**
 * The refusal of a table created by an earlier build, which lacks `claim_id`: names the statement
 * that adds it (the same in every dialect). `ensureSchema` throws it, and a run whose claim met
 * such a table answers it (unavailable: nothing acknowledged), rather than a database error that
 * reads like an outage.
 */
export const withoutClaimId = (table: string): ConfigurationError =>
  new ConfigurationError(
    `the ledger's table ${table} was created by an earlier build of myr-gateway and has no column claim_id (each run's claim is told apart by it): run ALTER TABLE ${table} ADD COLUMN claim_id BIGINT, then ensureSchema again`,
    'table',
  );

/** The statements of one dialect, for one table. */
export interface Statements {
  /** DDL, in order; idempotent. */
  readonly schema: readonly string[];
  /**
   * Probes for the columns an earlier build's table lacks (`CREATE TABLE IF NOT EXISTS` leaves it as
   * it was): fails with the database's "no such column" error on such a table.
   */
  readonly probe: string;
  /** Inserts the key's row if absent (or expired, except on MySQL), with the run's id; 1 affected row: claimed. */
  readonly claim: string;
  /**
   * The claim of a callback with a place in its payment's life: inserts the key's row only if the
   * payment's live mark is not above the callback's rank. 0 affected rows: a duplicate or
   * superseded (told apart by `readMark`, off the common path). It runs after `lockMark`, in the
   * same transaction; Postgres writes the mark in this statement itself (a CTE), one round trip.
   */
  readonly claimOrdered: string;
  /**
   * `[row, rank, expiresAt, now]`: writes the payment's mark row first (raising it to `rank`
   * unless it is live and higher), absent where `claimOrdered` does it itself (Postgres). Writing
   * the row locks it until COMMIT, so one payment's ordered callbacks are claimed one at a time:
   * a SUCCESS delivered while its REFUNDED still runs waits for it (then finds it, superseded)
   * instead of running beside it and committing after the refund.
   */
  readonly lockMark?: string;
  /**
   * MySQL: `[mark, rank, expiresAt, row, expiresAt, id]`, the claim of a callback whose status does
   * not raise the mark: the mark's row and the key's row in one INSERT IGNORE, in that order. A
   * new mark row is locked as inserted; an existing one is share-locked by the duplicate check,
   * which first waits for a transaction writing it (a REFUNDED in flight). 2 affected rows: both
   * new, so claimed and nothing could supersede it; fewer: told apart by `readMark`, `done` and
   * `takeOver`, off the common path. One statement where `lockMark` and `claimOrdered` are two.
   */
  readonly claimBeside?: string;
  /** MySQL: takes over an expired row the claim found, with the run's id; 1 affected row: claimed. */
  readonly takeOver?: string;
  /** `[row, now]`: the live mark's rank (Postgres: locked for the transaction), or no row. */
  readonly readMark: string;
  /**
   * `[row, id]`: one row while the claim is still this run's (the work did not end the
   * transaction, and the database did not roll it back under it and let a duplicate claim the
   * key). A read: the claim's row already says done, since it never commits without the work.
   */
  readonly done: string;
  /** `[now, batch]`: deletes at most `batch` expired rows. */
  readonly prune: string;
}

/**
 * The statements of `dialect` for `table` (already checked). `guarded`: the client sends the claim
 * before BEGIN's answer; its claims then fail unless they run in the ledger's transaction.
 */
export function statements(dialect: SqlDialect, table: string, bare: string, guarded = false): Statements {
  const expiry = guarded ? GUARDED_EXPIRY : '$2::bigint';
  switch (dialect) {
    case 'postgres':
      return {
        schema: [
          `CREATE TABLE IF NOT EXISTS ${table} (ledger_key VARCHAR(255) PRIMARY KEY, mark_rank SMALLINT, expires_at BIGINT NOT NULL, claim_id BIGINT)`,
          `CREATE INDEX IF NOT EXISTS ${bare}_expires ON ${table} (expires_at)`,
        ],
        probe: PROBE(table),
        claim:
          `INSERT INTO ${table} AS l (ledger_key, expires_at, claim_id) VALUES ($1, ${expiry}, $4::bigint) ON CONFLICT (ledger_key) ` +
          'DO UPDATE SET expires_at = EXCLUDED.expires_at, claim_id = EXCLUDED.claim_id WHERE l.expires_at <= $3',
        // The mark's upsert waits for a transaction holding the row and then updates the row as
        // that one committed it, so the claim's test reads the mark as of the last COMMIT.
        claimOrdered:
          `WITH mark AS (INSERT INTO ${table} AS m (ledger_key, mark_rank, expires_at) VALUES ($4::varchar, $6::smallint, ${expiry}) ON CONFLICT (ledger_key) DO UPDATE SET ` +
          'mark_rank = CASE WHEN m.expires_at <= $3::bigint THEN EXCLUDED.mark_rank ELSE GREATEST(m.mark_rank, EXCLUDED.mark_rank) END, expires_at = GREATEST(m.expires_at, EXCLUDED.expires_at) RETURNING mark_rank) ' +
          `INSERT INTO ${table} AS l (ledger_key, expires_at, claim_id) SELECT $1::varchar, ${expiry}, $7::bigint FROM mark WHERE mark.mark_rank <= $5::smallint ` +
          'ON CONFLICT (ledger_key) DO UPDATE SET expires_at = EXCLUDED.expires_at, claim_id = EXCLUDED.claim_id WHERE l.expires_at <= $3::bigint',
        readMark: `SELECT mark_rank FROM ${table} WHERE ledger_key = $1 AND expires_at > $2 FOR SHARE`,
        done: `SELECT 1 AS held FROM ${table} WHERE ledger_key = $1 AND claim_id = $2`,
        // The outer test is re-checked on a row a concurrent takeover just made live again (the
        // sub-select is not): without it prune deletes the done record that takeover committed.
        prune: `DELETE FROM ${table} WHERE ledger_key IN (SELECT ledger_key FROM ${table} WHERE expires_at <= $1 LIMIT $2) AND expires_at <= $1`,
      };
    case 'mysql':
      return {
        // utf8mb4_bin: keys differ by case (MySQL's default collation would make them one).
        schema: [
          `CREATE TABLE IF NOT EXISTS ${table} (ledger_key VARCHAR(255) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NOT NULL PRIMARY KEY, ` +
            'mark_rank SMALLINT NULL, expires_at BIGINT NOT NULL, claim_id BIGINT NULL, INDEX expires_at_idx (expires_at)) ENGINE=InnoDB',
        ],
        // No upsert here: with mysql2's default FOUND_ROWS flag, ON DUPLICATE KEY UPDATE answers 1 both
        // for an insert and for an unchanged row. An expired row is taken over by `takeOver`.
        probe: PROBE(table),
        claim: `INSERT IGNORE INTO ${table} (ledger_key, expires_at, claim_id) VALUES (?, ?, ?)`,
        // The mark is read without a lock, after `lockMark` wrote it: the ledger's transaction on
        // MySQL is READ COMMITTED, where INSERT … SELECT reads its source as a snapshot that has
        // this transaction's own write. (Under REPEATABLE READ it would take a gap lock on the
        // missing mark of most payments, and concurrent claims of other keys deadlock.)
        claimOrdered: `INSERT IGNORE INTO ${table} (ledger_key, expires_at, claim_id) SELECT ?, ?, ? FROM DUAL WHERE NOT EXISTS (SELECT 1 FROM ${table} WHERE ledger_key = ? AND expires_at > ? AND mark_rank > ?)`,
        claimBeside: `INSERT IGNORE INTO ${table} (ledger_key, mark_rank, expires_at, claim_id) VALUES (?, ?, ?, NULL), (?, NULL, ?, ?)`,
        readMark: `SELECT mark_rank FROM ${table} WHERE ledger_key = ? AND expires_at > ?`,
        takeOver: `UPDATE ${table} SET expires_at = ?, claim_id = ? WHERE ledger_key = ? AND expires_at <= ?`,
        done: `SELECT 1 AS held FROM ${table} WHERE ledger_key = ? AND claim_id = ?`,
        lockMark:
          `INSERT INTO ${table} (ledger_key, mark_rank, expires_at) VALUES (?, ?, ?) ON DUPLICATE KEY UPDATE ` +
          'mark_rank = IF(expires_at <= ?, ?, GREATEST(COALESCE(mark_rank, 0), ?)), expires_at = GREATEST(expires_at, ?)',
        prune: `DELETE FROM ${table} WHERE expires_at <= ? LIMIT ?`,
      };
    case 'sqlite':
      return {
        schema: [
          `CREATE TABLE IF NOT EXISTS ${table} (ledger_key TEXT PRIMARY KEY, mark_rank INTEGER, expires_at INTEGER NOT NULL, claim_id INTEGER)`,
          `CREATE INDEX IF NOT EXISTS ${bare}_expires ON ${bare} (expires_at)`,
        ],
        probe: PROBE(table),
        claim:
          `INSERT INTO ${table} (ledger_key, expires_at, claim_id) VALUES (?, ?, ?) ON CONFLICT (ledger_key) ` +
          'DO UPDATE SET expires_at = excluded.expires_at, claim_id = excluded.claim_id WHERE expires_at <= ?',
        claimOrdered:
          `INSERT INTO ${table} (ledger_key, expires_at, claim_id) SELECT ?, ?, ? WHERE NOT EXISTS (SELECT 1 FROM ${table} WHERE ledger_key = ? AND expires_at > ? AND mark_rank > ?) ` +
          'ON CONFLICT (ledger_key) DO UPDATE SET expires_at = excluded.expires_at, claim_id = excluded.claim_id WHERE expires_at <= ?',
        readMark: `SELECT mark_rank FROM ${table} WHERE ledger_key = ? AND expires_at > ?`,
        done: `SELECT 1 AS held FROM ${table} WHERE ledger_key = ? AND claim_id = ?`,
        lockMark:
          `INSERT INTO ${table} (ledger_key, mark_rank, expires_at) VALUES (?, ?, ?) ON CONFLICT (ledger_key) DO UPDATE SET ` +
          'mark_rank = CASE WHEN expires_at <= ? THEN excluded.mark_rank ELSE max(coalesce(mark_rank, 0), excluded.mark_rank) END, expires_at = max(expires_at, excluded.expires_at)',
        prune: `DELETE FROM ${table} WHERE rowid IN (SELECT rowid FROM ${table} WHERE expires_at <= ? LIMIT ?)`,
      };
  }
}

/** The parameters of each statement in the dialect's order (Postgres numbers them; the others are positional). */
export function params(dialect: SqlDialect) {
  return {
    claim: ({ row, until, id }: Claim, now: number) => (dialect === 'postgres' ? [row, until, now, id] : dialect === 'mysql' ? [row, until, id] : [row, until, id, now]),
    /** `markRank`: what `lockMark` (or Postgres's claim) writes into the mark, see SqlLedger's claim. */
    claimOrdered: ({ row, until, id }: Claim, now: number, mark: string, rank: number, markRank: number) =>
      dialect === 'postgres' ? [row, until, now, mark, rank, markRank, id] : dialect === 'mysql' ? [row, until, id, mark, now, rank] : [row, until, id, mark, now, rank, now],
    claimBeside: (mark: string, rank: number, { row, until, id }: Claim) => [mark, rank, until, row, until, id],
    takeOver: ({ row, until, id }: Claim, now: number) => [until, id, row, now],
    readMark: (row: string, now: number) => [row, now],
    done: ({ row, id }: Claim) => [row, id],
    lockMark: (row: string, rank: number, expiresAt: number, now: number) =>
      dialect === 'mysql' ? [row, rank, expiresAt, now, rank, rank, expiresAt] : [row, rank, expiresAt, now],
    prune: (now: number, batch: number) => [now, batch],
  };
}
