/**
 * How Postgres describes a table for `ensureSchema`'s check, and the statement that fixes one of
 * its columns: the same words for every table the SDK keeps (the ledger's, the payout outbox's).
 *
 * @module
 */
import { definitionOf, type ColumnDifference } from '../../schema-check.js';
import type { Statement } from '../dialect.js';

/** The collation a store's key needs on Postgres, as a refusal names it: one that tells every two different strings apart. */
export const DETERMINISTIC = 'a deterministic collation, such as the database default';

const DESCRIBE =
  "SELECT c.column_name AS name, c.data_type AS type, c.is_nullable = 'NO' AS not_null, c.collation_name AS collation, c.character_maximum_length AS length, " +
  // No collation named: the type's default, the database's, which Postgres keeps deterministic.
  'COALESCE((SELECT o.collisdeterministic FROM pg_collation o JOIN pg_namespace n ON n.oid = o.collnamespace WHERE o.collname = c.collation_name AND n.nspname = c.collation_schema), true) AS exact, ' +
  'EXISTS (SELECT 1 FROM information_schema.table_constraints t ' +
  'JOIN information_schema.key_column_usage k ON k.constraint_name = t.constraint_name AND k.table_schema = t.table_schema AND k.table_name = t.table_name ' +
  "WHERE t.constraint_type = 'PRIMARY KEY' AND t.table_schema = c.table_schema AND t.table_name = c.table_name AND k.column_name = c.column_name) AS primary_key, " +
  "(SELECT t.constraint_name FROM information_schema.table_constraints t WHERE t.constraint_type = 'PRIMARY KEY' AND t.table_schema = c.table_schema AND t.table_name = c.table_name) AS key_name " +
  'FROM information_schema.columns c WHERE c.table_schema = COALESCE($1::text, current_schema()) AND c.table_name = $2::text';

/** One row per column of `table` (checked; maybe `schema.table`); no row: no table. */
export function describeTable(table: string): Statement<null> {
  const [schema, name] = table.includes('.') ? table.split('.') : [null, table];
  return { text: DESCRIBE, params: () => [schema ?? null, name] };
}

/**
 * The statement that adds a missing column to `table`, or changes only what differs in the one
 * there: its type (with the database's default collation when its collation was wrong), NOT
 * NULL, and the primary key (the one there dropped by its name first: a second is refused).
 */
export const columnFix =
  (table: string) =>
  ({ column, exists, kinds, primaryKey }: ColumnDifference): string => {
    if (!exists) return `ALTER TABLE ${table} ADD COLUMN ${column.name} ${definitionOf(column)}`;
    const collation = kinds.includes('collation');
    const changes = [
      (kinds.includes('type') || collation) &&
        `ALTER COLUMN ${column.name} TYPE ${column.type}${collation ? ' COLLATE "default"' : ''}`,
      kinds.includes('null') && `ALTER COLUMN ${column.name} ${column.notNull ? 'SET' : 'DROP'} NOT NULL`,
      // The name is the database's own (quoted: a tool may have named it with capitals).
      kinds.includes('key') &&
        primaryKey.name !== undefined &&
        `DROP CONSTRAINT "${primaryKey.name.replaceAll('"', '""')}"`,
      kinds.includes('key') && `ADD PRIMARY KEY (${column.name})`,
    ];
    return `ALTER TABLE ${table} ${changes.filter((change) => typeof change === 'string').join(', ')}`;
  };
