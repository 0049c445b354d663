/**
 * Every statement the ledger sends on MySQL 8 / MariaDB 10.11, its text beside its parameters
 * (positional `?`). The claims run under READ COMMITTED (session.ts says why).
 *
 * @module
 */
import type { LedgerStatements } from '../dialect.js';
import { positionalReads } from '../positional-reads.js';
import { mysqlSchema } from './ledger-schema.js';

/** The ledger's statements on MySQL for `table` (checked). */
export function mysqlLedger(table: string): LedgerStatements {
  return {
    ...mysqlSchema(table),
    // No upsert here: with mysql2's default FOUND_ROWS flag, ON DUPLICATE KEY UPDATE answers 1 both
    // for an insert and for an unchanged row. An expired row is taken over by `takeOver`.
    claim: {
      text: `INSERT IGNORE INTO ${table} (ledger_key, handled_statuses, expires_at, claim_id) VALUES (?, 0, ?, ?)`,
      params: ({ claim }) => [claim.row, claim.until, claim.id],
    },
    // The payment's row is read without a lock, after `lockMark` wrote it (READ COMMITTED: the
    // snapshot has this transaction's own write).
    claimOrdered: {
      text:
        `INSERT IGNORE INTO ${table} (ledger_key, handled_statuses, expires_at, claim_id) SELECT ?, 0, ?, ? FROM DUAL ` +
        `WHERE NOT EXISTS (SELECT 1 FROM ${table} WHERE ledger_key = ? AND (mark_rank > ? OR (handled_statuses & ?) <> 0))`,
      params: ({ claim, mark, rank, handled }) => [claim.row, claim.until, claim.id, mark, rank, handled],
    },
    claimPath: {
      name: 'rows-beside',
      // Writes (and so locks) the payment's row; the status's bit is recorded once claimed.
      lockMark: {
        text: `INSERT INTO ${table} (ledger_key, mark_rank, handled_statuses, expires_at) VALUES (?, ?, 0, ?) ON DUPLICATE KEY UPDATE mark_rank = GREATEST(COALESCE(mark_rank, 0), ?)`,
        params: ({ mark, markRank, keptUntil }) => [mark, markRank, keptUntil, markRank],
      },
      markHandled: {
        text: `UPDATE ${table} SET handled_statuses = handled_statuses | ? WHERE ledger_key = ?`,
        params: ({ mark, handled }) => [handled, mark],
      },
      // A new payment row is locked as inserted; an existing one is share-locked by the duplicate
      // check, which first waits for a transaction writing it (a REFUNDED in flight).
      claimBeside: {
        text: `INSERT IGNORE INTO ${table} (ledger_key, mark_rank, handled_statuses, expires_at, claim_id) VALUES (?, ?, ?, ?, NULL), (?, NULL, 0, ?, ?)`,
        params: ({ claim, mark, markRank, handled, keptUntil }) => [
          mark,
          markRank,
          handled,
          keptUntil,
          claim.row,
          claim.until,
          claim.id,
        ],
      },
      takeOver: {
        text: `UPDATE ${table} SET expires_at = ?, claim_id = ? WHERE ledger_key = ? AND expires_at <= ?`,
        params: ({ claim, now }) => [claim.until, claim.id, claim.row, now],
      },
    },
    ...positionalReads(table),
    prune: {
      text: `DELETE FROM ${table} WHERE expires_at <= ? LIMIT ?`,
      params: ({ before, batch }) => [before, batch],
    },
  };
}
