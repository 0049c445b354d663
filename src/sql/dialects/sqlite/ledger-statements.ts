/**
 * Every statement the ledger sends on SQLite, its text beside its parameters (positional `?`).
 *
 * @module
 */
import type { LedgerStatements } from '../dialect.js';
import { positionalReads } from '../positional-reads.js';
import { sqliteSchema } from './ledger-schema.js';

/** The ledger's statements on SQLite for `table` (checked; `bare` its last part: an index names no schema). */
export function sqliteLedger(table: string, bare: string): LedgerStatements {
  return {
    ...sqliteSchema(table, bare),
    claim: {
      text:
        `INSERT INTO ${table} (ledger_key, handled_statuses, expires_at, claim_id) VALUES (?, 0, ?, ?) ON CONFLICT (ledger_key) ` +
        'DO UPDATE SET expires_at = excluded.expires_at, claim_id = excluded.claim_id WHERE expires_at <= ?',
      params: ({ claim, now }) => [claim.row, claim.until, claim.id, now],
    },
    // SQLite keeps any value in an INTEGER column: a payment's row the ledger did not write (text,
    // a fraction, a blob) refuses the claim too, and `readMark`'s reader then says which column.
    // typeof(0) is 'integer', typeof(NULL) 'null': no type name is spelled out.
    claimOrdered: {
      text:
        `INSERT INTO ${table} (ledger_key, handled_statuses, expires_at, claim_id) SELECT ?, 0, ?, ? WHERE NOT EXISTS (SELECT 1 FROM ${table} WHERE ledger_key = ? AND (mark_rank > ? OR (handled_statuses & ?) <> 0 ` +
        'OR typeof(mark_rank) NOT IN (typeof(0), typeof(NULL)) OR typeof(handled_statuses) <> typeof(0))) ' +
        'ON CONFLICT (ledger_key) DO UPDATE SET expires_at = excluded.expires_at, claim_id = excluded.claim_id WHERE expires_at <= ?',
      params: ({ claim, now, mark, rank, handled }) => [claim.row, claim.until, claim.id, mark, rank, handled, now],
    },
    claimPath: {
      name: 'claim-then-mark',
      markClaimed: {
        text:
          `INSERT INTO ${table} (ledger_key, mark_rank, handled_statuses, expires_at) VALUES (?, ?, ?, ?) ON CONFLICT (ledger_key) DO UPDATE SET ` +
          'mark_rank = max(coalesce(mark_rank, 0), excluded.mark_rank), handled_statuses = handled_statuses | excluded.handled_statuses',
        params: ({ mark, markRank, handled, keptUntil }) => [mark, markRank, handled, keptUntil],
      },
    },
    ...positionalReads(table),
    prune: {
      text: `DELETE FROM ${table} WHERE rowid IN (SELECT rowid FROM ${table} WHERE expires_at <= ? LIMIT ?)`,
      params: ({ before, batch }) => [before, batch],
    },
  };
}
