/**
 * The ledger's table on SQLite: its columns, the DDL that creates them, how the database describes
 * the table (for `ensureSchema`'s check), and the statement that fixes a column.
 *
 * @module
 */
import { definitionOf, type TableColumn } from '../../schema-check.js';
import type { LedgerStatements } from '../dialect.js';

const WHOLE = ['integer', 'int', 'bigint', 'smallint'];

/** The columns the ledger needs on SQLite (a TEXT primary key may hold NULL there: the ledger never writes one). */
export const COLUMNS: readonly TableColumn[] = [
  { name: 'ledger_key', type: 'TEXT', types: ['text', 'varchar(255)', 'varchar'], notNull: false, primaryKey: true },
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
  const schema = table.includes('.') ? table.split('.')[0] : 'main';
  const create = `CREATE TABLE IF NOT EXISTS ${table} (${COLUMNS.map((column) => `${column.name} ${definitionOf(column)}`).join(', ')})`;
  return {
    schema: [create, `CREATE INDEX IF NOT EXISTS ${bare}_expires ON ${bare} (expires_at)`],
    columns: COLUMNS,
    describe: {
      text: 'SELECT name, type, "notnull" AS not_null, pk > 0 AS primary_key, NULL AS collation FROM pragma_table_info(?, ?)',
      params: () => [bare, schema],
    },
    // SQLite cannot change a column's type or constraints in place.
    fixColumn: (column, exists) =>
      exists
        ? `a new table (SQLite cannot change a column): ${create.replace(' IF NOT EXISTS', '')}, then copy the rows over`
        : `ALTER TABLE ${table} ADD COLUMN ${column.name} ${definitionOf(column)}`,
  };
}
