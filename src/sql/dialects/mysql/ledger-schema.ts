/**
 * The ledger's table on MySQL 8 / MariaDB 10.11: its columns and the DDL that creates them (how
 * the database describes a table, and the statement that fixes a column: `table-check.ts`).
 *
 * @module
 */
import { MAX_KEY_LENGTH } from '../../ledger/claims.js';
import { definitionOf, type TableColumn } from '../../schema-check.js';
import type { LedgerStatements } from '../dialect.js';
import { columnFix, describeTable } from './table-check.js';

const SMALL = ['smallint', 'int', 'mediumint', 'bigint'];

/** The columns the ledger needs on MySQL. The key compares bytes: MySQL's default collation would make `PAY_ab` and `PAY_AB` one. */
export const COLUMNS: readonly TableColumn[] = [
  {
    name: 'ledger_key',
    type: 'VARCHAR(255)',
    binary: 'CHARACTER SET utf8mb4 COLLATE utf8mb4_bin',
    types: ['varchar'],
    // A shorter column cuts longer keys under INSERT IGNORE (a SUCCESS and a REFUNDED became one key).
    chars: MAX_KEY_LENGTH,
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
  return {
    schema: [
      `CREATE TABLE IF NOT EXISTS ${table} (${COLUMNS.map((column) => `${column.name} ${definitionOf(column)}`).join(', ')}, INDEX expires_at_idx (expires_at)) ENGINE=InnoDB`,
    ],
    columns: COLUMNS,
    describe: describeTable(table),
    fixColumn: columnFix(table),
  };
}
