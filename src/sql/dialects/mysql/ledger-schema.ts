/**
 * The ledger's table on MySQL 8 / MariaDB 10.11: its columns, the DDL that creates them, how the
 * database describes the table (for `ensureSchema`'s check), and the statement that fixes a column.
 *
 * @module
 */
import { definitionOf, type TableColumn } from '../../schema-check.js';
import type { LedgerStatements } from '../dialect.js';

const SMALL = ['smallint', 'int', 'mediumint', 'bigint'];

/** The columns the ledger needs on MySQL. The key compares bytes: MySQL's default collation would make `PAY_ab` and `PAY_AB` one. */
export const COLUMNS: readonly TableColumn[] = [
  {
    name: 'ledger_key',
    type: 'VARCHAR(255)',
    binary: 'CHARACTER SET utf8mb4 COLLATE utf8mb4_bin',
    types: ['varchar'],
    notNull: true,
    primaryKey: true,
  },
  { name: 'mark_rank', type: 'SMALLINT', types: SMALL, notNull: false },
  { name: 'handled_statuses', type: 'SMALLINT', types: SMALL, notNull: true, default: '0' },
  { name: 'expires_at', type: 'BIGINT', types: ['bigint'], notNull: true },
  { name: 'claim_id', type: 'BIGINT', types: ['bigint'], notNull: false },
];

/** The schema part of the ledger's statements on MySQL for `table` (checked). */
export function mysqlSchema(table: string): Pick<LedgerStatements, 'schema' | 'columns' | 'describe' | 'fixColumn'> {
  const [schema, name] = table.includes('.') ? table.split('.') : [null, table];
  return {
    schema: [
      `CREATE TABLE IF NOT EXISTS ${table} (${COLUMNS.map((column) => `${column.name} ${definitionOf(column)}`).join(', ')}, INDEX expires_at_idx (expires_at)) ENGINE=InnoDB`,
    ],
    columns: COLUMNS,
    describe: {
      text:
        "SELECT COLUMN_NAME AS name, DATA_TYPE AS type, IS_NULLABLE = 'NO' AS not_null, COLUMN_KEY = 'PRI' AS primary_key, COLLATION_NAME AS collation " +
        'FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = COALESCE(?, DATABASE()) AND TABLE_NAME = ?',
      params: () => [schema ?? null, name],
    },
    fixColumn: (column, exists) =>
      exists
        ? `ALTER TABLE ${table} MODIFY COLUMN ${column.name} ${definitionOf(column, false)}`
        : `ALTER TABLE ${table} ADD COLUMN ${column.name} ${definitionOf(column)}`,
  };
}
