/**
 * The ledger's two reads, in the words of the dialects that take positional `?` parameters (MySQL,
 * SQLite): the same text and parameters in both.
 *
 * @module
 */
import type { LedgerStatements } from './dialect.js';

/** `readMark` and `done` for `table` (checked), with `?` placeholders. */
export function positionalReads(table: string): Pick<LedgerStatements, 'readMark' | 'done'> {
  return {
    readMark: {
      text: `SELECT mark_rank, handled_statuses FROM ${table} WHERE ledger_key = ?`,
      params: ({ mark }) => [mark],
    },
    done: {
      text: `SELECT 1 AS held FROM ${table} WHERE ledger_key = ? AND claim_id = ?`,
      params: ({ row, id }) => [row, id],
    },
  };
}
