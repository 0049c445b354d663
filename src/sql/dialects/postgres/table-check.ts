/**
 * How Postgres describes a table for `ensureSchema`'s check, and the statement that fixes one of
 * its columns: the same words for every table the SDK keeps (the ledger's, the payout outbox's).
 *
 * @module
 */
import { definitionOf, type ColumnDifference } from '../../schema-check.js';
import type { Statement } from '../dialect.js';

const DESCRIBE =
  "SELECT c.column_name AS name, c.data_type AS type, c.is_nullable = 'NO' AS not_null, NULL AS collation, c.character_maximum_length AS length, EXISTS (SELECT 1 FROM information_schema.table_constraints t " +
  'JOIN information_schema.key_column_usage k ON k.constraint_name = t.constraint_name AND k.table_schema = t.table_schema AND k.table_name = t.table_name ' +
  "WHERE t.constraint_type = 'PRIMARY KEY' AND t.table_schema = c.table_schema AND t.table_name = c.table_name AND k.column_name = c.column_name) AS primary_key " +
  'FROM information_schema.columns c WHERE c.table_schema = COALESCE($1::text, current_schema()) AND c.table_name = $2::text';

/** One row per column of `table` (checked; maybe `schema.table`); no row: no table. */
export function describeTable(table: string): Statement<null> {
  const [schema, name] = table.includes('.') ? table.split('.') : [null, table];
  return { text: DESCRIBE, params: () => [schema ?? null, name] };
}

/**
 * The statement that adds a missing column to `table`, or gives the column there its definition
 * (a primary key only when it lacks one: a second is refused).
 */
export const columnFix =
  (table: string) =>
  ({ column, exists, keyMissing }: ColumnDifference): string => {
    if (!exists) return `ALTER TABLE ${table} ADD COLUMN ${column.name} ${definitionOf(column)}`;
    const changes = [
      `ALTER COLUMN ${column.name} TYPE ${column.type}`,
      column.notNull && `ALTER COLUMN ${column.name} SET NOT NULL`,
      keyMissing && `ADD PRIMARY KEY (${column.name})`,
    ];
    return `ALTER TABLE ${table} ${changes.filter((change) => typeof change === 'string').join(', ')}`;
  };
