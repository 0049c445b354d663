/**
 * The ledger's table on Postgres: its columns and the DDL that creates them (how the database
 * describes a table, and the statement that fixes a column: `table-check.ts`).
 *
 * @module
 */
import { definitionOf, type TableColumn } from '../../schema-check.js';
import type { LedgerStatements } from '../dialect.js';
import { columnFix, describeTable } from './table-check.js';

const SMALL = ['smallint', 'integer', 'bigint'];

/** The columns the ledger needs on Postgres. */
export const COLUMNS: readonly TableColumn[] = [
  { name: 'ledger_key', type: 'VARCHAR(255)', types: ['character varying', 'text'], notNull: false, primaryKey: true },
  { name: 'mark_rank', type: 'SMALLINT', types: SMALL, notNull: false },
  { name: 'handled_statuses', type: 'SMALLINT', types: SMALL, notNull: true, default: '0' },
  { name: 'expires_at', type: 'BIGINT', types: ['bigint'], notNull: true },
  { name: 'claim_id', type: 'BIGINT', types: ['bigint'], notNull: false },
];

/** The schema part of the ledger's statements on Postgres for `table` (checked; `bare` its last part). */
export function postgresSchema(
  table: string,
  bare: string,
): Pick<LedgerStatements, 'schema' | 'columns' | 'describe' | 'fixColumn'> {
  return {
    schema: [
      `CREATE TABLE IF NOT EXISTS ${table} (${COLUMNS.map((column) => `${column.name} ${definitionOf(column)}`).join(', ')})`,
      `CREATE INDEX IF NOT EXISTS ${bare}_expires ON ${table} (expires_at)`,
    ],
    columns: COLUMNS,
    describe: describeTable(table),
    fixColumn: columnFix(table),
  };
}
