/**
 * How SQLite describes a table for `ensureSchema`'s check, and the statement that fixes one of its
 * columns: the same words for every table the SDK keeps (the ledger's, the payout outbox's).
 * SQLite holds text of any length whatever the declared type says, so it describes no length.
 *
 * @module
 */
import { definitionOf, type ColumnDifference } from '../../schema-check.js';
import type { Statement } from '../dialect.js';

/** The whole-number types SQLite stores in up to 64 bits (any of them holds a 53-bit id or a ms epoch). */
export const WHOLE: readonly string[] = ['integer', 'int', 'bigint', 'smallint'];

const DESCRIBE =
  'SELECT name, type, "notnull" AS not_null, pk > 0 AS primary_key, NULL AS collation, NULL AS length FROM pragma_table_info(?, ?)';

/** One row per column of `table` (checked; maybe `schema.table`, `bare` its last part); no row: no table. */
export function describeTable(table: string, bare: string): Statement<null> {
  const schema = table.includes('.') ? table.split('.')[0] : 'main';
  return { text: DESCRIBE, params: () => [bare, schema] };
}

/**
 * The statement that adds a missing column to `table`, or, for a column there, the new
 * table to copy the rows into (`create`, the table's CREATE TABLE): SQLite cannot change a column
 * in place.
 */
export const columnFix =
  (table: string, create: string) =>
  ({ column, exists }: ColumnDifference): string =>
    exists
      ? `a new table (SQLite cannot change a column): ${create.replace(' IF NOT EXISTS', '')}, then copy the rows over`
      : `ALTER TABLE ${table} ADD COLUMN ${column.name} ${definitionOf(column)}`;
