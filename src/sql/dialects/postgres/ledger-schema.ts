/**
 * The ledger's table on Postgres: its columns and the DDL that creates them (how the database
 * describes a table, and the statement that fixes a column: `table-check.ts`).
 *
 * @module
 */
import { MAX_KEY_LENGTH } from '../../ledger/claims.js';
import { definitionOf, type TableColumn } from '../../schema-check.js';
import type { LedgerStatements } from '../dialect.js';
import { columnFix, describeTable, DETERMINISTIC } from './table-check.js';

const SMALL = ['smallint', 'integer', 'bigint'];

/**
 * The columns the ledger needs on Postgres. The key holds the longest key the ledger writes (a
 * shorter one fails every callback), and its collation is deterministic: an ICU collation with
 * `deterministic = false` would make `PAY_ab` and `PAY_AB` one.
 */
export const COLUMNS: readonly TableColumn[] = [
  {
    name: 'ledger_key',
    type: `VARCHAR(${MAX_KEY_LENGTH})`,
    types: ['character varying', 'text'],
    chars: MAX_KEY_LENGTH,
    notNull: false,
    primaryKey: true,
    exact: DETERMINISTIC,
  },
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
