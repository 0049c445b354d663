/**
 * The one text a merchant's option puts into the SQL: the table's name, checked before any
 * statement is built.
 *
 * @module
 */
import { ConfigurationError } from '../../core/errors/base.js';

const IDENTIFIER = /^[A-Za-z_][A-Za-z0-9_]{0,62}$/;

/** A checked table name: as written (maybe `schema.table`), and its last part. */
export interface TableName {
  readonly qualified: string;
  readonly bare: string;
}

/**
 * The table's name, checked: one identifier, or `schema.table`, each `[A-Za-z_][A-Za-z0-9_]{0,62}`.
 * Anything else is a ConfigurationError before any SQL is sent.
 *
 * @example
 * ```ts
 * checkTableName('payments.webhook_ledger'); // { qualified: 'payments.webhook_ledger', bare: 'webhook_ledger' }
 * ```
 */
export function checkTableName(table: unknown): TableName {
  const parts = typeof table === 'string' ? table.split('.') : [];
  if (parts.length < 1 || parts.length > 2 || !parts.every((part) => IDENTIFIER.test(part))) {
    throw new ConfigurationError(
      "table must be an SQL identifier ([A-Za-z_][A-Za-z0-9_]{0,62}), optionally schema-qualified (schema.table); it is written into the ledger's SQL unquoted",
      'table',
    );
  }
  return { qualified: parts.join('.'), bare: parts.at(-1) as string };
}
