/**
 * The ledger's table on SQLite: its columns and the DDL that creates them (how the database
 * describes a table, and the statement that fixes a column: `table-check.ts`).
 *
 * @module
 */
import { definitionOf, type TableColumn } from '../../schema-check.js';
import type { LedgerStatements } from '../dialect.js';
import { columnFix, describeTable, textKey, WHOLE } from './table-check.js';

// Declared as text: SQLite gives them text affinity and ignores a declared length.
const TEXT = ['text', 'varchar', 'character varying', 'nvarchar', 'char', 'character', 'nchar', 'clob'];

/**
 * The columns the ledger needs on SQLite. The key is made NOT NULL, as Drizzle's primary key is
 * (else `drizzle-kit push` rebuilds the table by copy), but a table made without it passes: a TEXT
 * primary key may hold NULL on SQLite, and the ledger never writes one. The key compares with
 * BINARY, SQLite's default: NOCASE would make `PAY_ab` and `PAY_AB` one.
 */
export const COLUMNS: readonly TableColumn[] = [
  textKey('ledger_key', TEXT),
  { name: 'mark_rank', type: 'INTEGER', types: WHOLE, notNull: false },
  { name: 'handled_statuses', type: 'INTEGER', types: WHOLE, notNull: true, default: '0' },
  { name: 'expires_at', type: 'INTEGER', types: WHOLE, notNull: true },
  { name: 'claim_id', type: 'INTEGER', types: WHOLE, notNull: false },
];

/** The schema part of the ledger's statements on SQLite for `table` (checked; `bare` its last part: an index names no schema). */
export function sqliteSchema(
  table: string,
  bare: string,
): Pick<LedgerStatements, 'schema' | 'columns' | 'describe' | 'fixColumn'> {
  const create = `CREATE TABLE IF NOT EXISTS ${table} (${COLUMNS.map((column) => `${column.name} ${definitionOf(column)}`).join(', ')})`;
  return {
    schema: [create, `CREATE INDEX IF NOT EXISTS ${bare}_expires ON ${bare} (expires_at)`],
    columns: COLUMNS,
    describe: describeTable(table, bare),
    fixColumn: columnFix(table, create),
  };
}
