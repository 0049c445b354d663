/**
 * The ledger's table on Postgres: its columns, the DDL that creates them, how the database
 * describes the table (for `ensureSchema`'s check), and the statement that fixes a column.
 *
 * @module
 */
import { definitionOf, type TableColumn } from '../../schema-check.js';
import type { LedgerStatements } from '../dialect.js';

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
  const [schema, name] = table.includes('.') ? table.split('.') : [null, table];
  return {
    schema: [
      `CREATE TABLE IF NOT EXISTS ${table} (${COLUMNS.map((column) => `${column.name} ${definitionOf(column)}`).join(', ')})`,
      `CREATE INDEX IF NOT EXISTS ${bare}_expires ON ${table} (expires_at)`,
    ],
    columns: COLUMNS,
    describe: {
      text:
        "SELECT c.column_name AS name, c.data_type AS type, c.is_nullable = 'NO' AS not_null, NULL AS collation, EXISTS (SELECT 1 FROM information_schema.table_constraints t " +
        'JOIN information_schema.key_column_usage k ON k.constraint_name = t.constraint_name AND k.table_schema = t.table_schema AND k.table_name = t.table_name ' +
        "WHERE t.constraint_type = 'PRIMARY KEY' AND t.table_schema = c.table_schema AND t.table_name = c.table_name AND k.column_name = c.column_name) AS primary_key " +
        'FROM information_schema.columns c WHERE c.table_schema = COALESCE($1::text, current_schema()) AND c.table_name = $2::text',
      params: () => [schema ?? null, name],
    },
    fixColumn: (column, exists) => {
      if (!exists) return `ALTER TABLE ${table} ADD COLUMN ${column.name} ${definitionOf(column)}`;
      const changes = [
        `ALTER COLUMN ${column.name} TYPE ${column.type}`,
        column.notNull && `ALTER COLUMN ${column.name} SET NOT NULL`,
        column.primaryKey && `ADD PRIMARY KEY (${column.name})`,
      ];
      return `ALTER TABLE ${table} ${changes.filter((change) => typeof change === 'string').join(', ')}`;
    },
  };
}
