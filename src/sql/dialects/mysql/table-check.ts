/**
 * How MySQL 8 / MariaDB 10.11 describe a table for `ensureSchema`'s check, and the statement that
 * fixes one of its columns: the same words for every table the SDK keeps (the ledger's, the
 * payout outbox's).
 *
 * @module
 */
import { definitionOf, type ColumnDifference } from '../../schema-check.js';
import type { Statement } from '../dialect.js';

const DESCRIBE =
  "SELECT COLUMN_NAME AS name, DATA_TYPE AS type, IS_NULLABLE = 'NO' AS not_null, COLUMN_KEY = 'PRI' AS primary_key, COLLATION_NAME AS collation, CHARACTER_MAXIMUM_LENGTH AS length " +
  'FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = COALESCE(?, DATABASE()) AND TABLE_NAME = ?';

/** One row per column of `table` (checked; maybe `schema.table`); no row: no table. */
export function describeTable(table: string): Statement<null> {
  const [schema, name] = table.includes('.') ? table.split('.') : [null, table];
  return { text: DESCRIBE, params: () => [schema ?? null, name] };
}

/**
 * The statement that adds a missing column to `table`, or gives the column there its definition
 * (MODIFY keeps a primary key there and adds none: when the key is wrong, the one there is dropped
 * and the column made the key).
 */
export const columnFix =
  (table: string) =>
  ({ column, exists, kinds, primaryKey }: ColumnDifference): string => {
    if (!exists) return `ALTER TABLE ${table} ADD COLUMN ${column.name} ${definitionOf(column)}`;
    const key = kinds.includes('key')
      ? `${primaryKey.columns.length > 0 ? ', DROP PRIMARY KEY' : ''}, ADD PRIMARY KEY (${column.name})`
      : '';
    return `ALTER TABLE ${table} MODIFY COLUMN ${column.name} ${definitionOf(column, false)}${key}`;
  };
