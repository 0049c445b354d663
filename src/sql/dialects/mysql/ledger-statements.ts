/**
 * Every statement the ledger sends on MySQL 8 / MariaDB 10.11, its text beside its parameters
 * (positional `?`). The claims run under READ COMMITTED (session.ts says why).
 *
 * @module
 */
import type { LedgerStatements } from '../dialect.js';

/** The ledger's statements on MySQL for `table` (checked). */
export function mysqlLedger(table: string): LedgerStatements {
  return {
    // utf8mb4_bin: keys differ by case (MySQL's default collation would make them one).
    schema: [
      `CREATE TABLE IF NOT EXISTS ${table} (ledger_key VARCHAR(255) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NOT NULL PRIMARY KEY, ` +
        'mark_rank SMALLINT NULL, expires_at BIGINT NOT NULL, claim_id BIGINT NULL, INDEX expires_at_idx (expires_at)) ENGINE=InnoDB',
    ],
    probe: `SELECT claim_id FROM ${table} WHERE 1 = 0`,
    // No upsert here: with mysql2's default FOUND_ROWS flag, ON DUPLICATE KEY UPDATE answers 1 both
    // for an insert and for an unchanged row. An expired row is taken over by `takeOver`.
    claim: { text: `INSERT IGNORE INTO ${table} (ledger_key, expires_at, claim_id) VALUES (?, ?, ?)`, params: ({ claim }) => [claim.row, claim.until, claim.id] },
    // The mark is read without a lock, after `lockMark` wrote it (READ COMMITTED: the snapshot has
    // this transaction's own write).
    claimOrdered: {
      text: `INSERT IGNORE INTO ${table} (ledger_key, expires_at, claim_id) SELECT ?, ?, ? FROM DUAL WHERE NOT EXISTS (SELECT 1 FROM ${table} WHERE ledger_key = ? AND expires_at > ? AND mark_rank > ?)`,
      params: ({ claim, now, mark, rank }) => [claim.row, claim.until, claim.id, mark, now, rank],
    },
    claimPath: {
      name: 'rows-beside',
      lockMark: {
        text:
          `INSERT INTO ${table} (ledger_key, mark_rank, expires_at) VALUES (?, ?, ?) ON DUPLICATE KEY UPDATE ` +
          'mark_rank = IF(expires_at <= ?, ?, GREATEST(COALESCE(mark_rank, 0), ?)), expires_at = GREATEST(expires_at, ?)',
        params: ({ mark, markRank, expiresAt, now }) => [mark, markRank, expiresAt, now, markRank, markRank, expiresAt],
      },
      // A new mark row is locked as inserted; an existing one is share-locked by the duplicate
      // check, which first waits for a transaction writing it (a REFUNDED in flight).
      claimBeside: {
        text: `INSERT IGNORE INTO ${table} (ledger_key, mark_rank, expires_at, claim_id) VALUES (?, ?, ?, NULL), (?, NULL, ?, ?)`,
        params: ({ claim, mark, markRank }) => [mark, markRank, claim.until, claim.row, claim.until, claim.id],
      },
      takeOver: {
        text: `UPDATE ${table} SET expires_at = ?, claim_id = ? WHERE ledger_key = ? AND expires_at <= ?`,
        params: ({ claim, now }) => [claim.until, claim.id, claim.row, now],
      },
    },
    readMark: { text: `SELECT mark_rank FROM ${table} WHERE ledger_key = ? AND expires_at > ?`, params: ({ mark, now }) => [mark, now] },
    done: { text: `SELECT 1 AS held FROM ${table} WHERE ledger_key = ? AND claim_id = ?`, params: ({ row, id }) => [row, id] },
    prune: { text: `DELETE FROM ${table} WHERE expires_at <= ? LIMIT ?`, params: ({ before, batch }) => [before, batch] },
  };
}
