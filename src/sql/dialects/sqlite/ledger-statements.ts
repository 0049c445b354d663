/**
 * Every statement the ledger sends on SQLite, its text beside its parameters (positional `?`).
 *
 * @module
 */
import type { LedgerStatements } from '../dialect.js';

/** The ledger's statements on SQLite for `table` (checked; `bare` its last part: an index names no schema). */
export function sqliteLedger(table: string, bare: string): LedgerStatements {
  return {
    schema: [
      `CREATE TABLE IF NOT EXISTS ${table} (ledger_key TEXT PRIMARY KEY, mark_rank INTEGER, expires_at INTEGER NOT NULL, claim_id INTEGER)`,
      `CREATE INDEX IF NOT EXISTS ${bare}_expires ON ${bare} (expires_at)`,
    ],
    probe: `SELECT claim_id FROM ${table} WHERE 1 = 0`,
    claim: {
      text:
        `INSERT INTO ${table} (ledger_key, expires_at, claim_id) VALUES (?, ?, ?) ON CONFLICT (ledger_key) ` +
        'DO UPDATE SET expires_at = excluded.expires_at, claim_id = excluded.claim_id WHERE expires_at <= ?',
      params: ({ claim, now }) => [claim.row, claim.until, claim.id, now],
    },
    claimOrdered: {
      text:
        `INSERT INTO ${table} (ledger_key, expires_at, claim_id) SELECT ?, ?, ? WHERE NOT EXISTS (SELECT 1 FROM ${table} WHERE ledger_key = ? AND expires_at > ? AND mark_rank > ?) ` +
        'ON CONFLICT (ledger_key) DO UPDATE SET expires_at = excluded.expires_at, claim_id = excluded.claim_id WHERE expires_at <= ?',
      params: ({ claim, now, mark, rank }) => [claim.row, claim.until, claim.id, mark, now, rank, now],
    },
    claimPath: {
      name: 'mark-then-claim',
      lockMark: {
        text:
          `INSERT INTO ${table} (ledger_key, mark_rank, expires_at) VALUES (?, ?, ?) ON CONFLICT (ledger_key) DO UPDATE SET ` +
          'mark_rank = CASE WHEN expires_at <= ? THEN excluded.mark_rank ELSE max(coalesce(mark_rank, 0), excluded.mark_rank) END, expires_at = max(expires_at, excluded.expires_at)',
        params: ({ mark, markRank, expiresAt, now }) => [mark, markRank, expiresAt, now],
      },
    },
    readMark: { text: `SELECT mark_rank FROM ${table} WHERE ledger_key = ? AND expires_at > ?`, params: ({ mark, now }) => [mark, now] },
    done: { text: `SELECT 1 AS held FROM ${table} WHERE ledger_key = ? AND claim_id = ?`, params: ({ row, id }) => [row, id] },
    prune: { text: `DELETE FROM ${table} WHERE rowid IN (SELECT rowid FROM ${table} WHERE expires_at <= ? LIMIT ?)`, params: ({ before, batch }) => [before, batch] },
  };
}
