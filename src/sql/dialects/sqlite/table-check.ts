/**
 * How SQLite describes a table for `ensureSchema`'s check, and the statement that fixes one of its
 * columns: the same words for every table the SDK keeps (the ledger's, the payout outbox's).
 * SQLite holds text of any length whatever the declared type says, so it describes no length.
 *
 * @module
 */
import { definitionOf, type ColumnDifference, type TableColumn } from '../../schema-check.js';
import type { Statement } from '../dialect.js';

/** The whole-number types SQLite stores in up to 64 bits (any of them holds a 53-bit id or a ms epoch). */
export const WHOLE: readonly string[] = ['integer', 'int', 'bigint', 'smallint'];

// A declared length is left out of the type: SQLite ignores it (VARCHAR(32) holds any text). The
// collation is the primary key index's: the one ON CONFLICT and the key's lookups compare with.
/**
 * A store's TEXT primary key on SQLite (the ledger's `ledger_key`, the outbox's `reference_id`):
 * NOT NULL in the DDL, but a table made without it passes (a TEXT primary key may hold NULL on
 * SQLite, and neither store writes one), and compared with BINARY, SQLite's default: NOCASE
 * would make keys that differ only by case one.
 */
export const textKey = (name: string, types: readonly string[]): TableColumn => ({
  name,
  type: 'TEXT',
  types,
  notNull: true,
  nullTolerated: true,
  primaryKey: true,
  exact: "BINARY, SQLite's default",
});

const DESCRIBE =
  "SELECT c.name, rtrim(substr(c.type, 1, instr(c.type || '(', '(') - 1)) AS type, c.\"notnull\" AS not_null, " +
  "c.pk > 0 AS primary_key, k.coll AS collation, upper(coalesce(k.coll, 'BINARY')) = 'BINARY' AS exact, NULL AS length " +
  'FROM pragma_table_info(?, ?) c LEFT JOIN (SELECT x.name, x.coll FROM pragma_index_list(?, ?) l ' +
  "JOIN pragma_index_xinfo(l.name, ?) x WHERE l.origin = 'pk' AND x.key = 1) k ON k.name = c.name";

/** One row per column of `table` (checked; maybe `schema.table`, `bare` its last part); no row: no table. */
export function describeTable(table: string, bare: string): Statement<null> {
  const schema = table.includes('.') ? table.split('.')[0] : 'main';
  return { text: DESCRIBE, params: () => [bare, schema, bare, schema, schema] };
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
