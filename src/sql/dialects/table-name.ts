/**
 * The one text a merchant's option puts into the SQL: the table's name, checked before any
 * statement is built.
 *
 * @module
 */
import { ConfigurationError } from '../../core/errors/base.js';

// Lower case: Postgres folds an unquoted name to lower case, so `MyrLedger` in the ledger's SQL
// is `myrledger`, while a tool that quotes names (Drizzle, a catalog lookup) means `MyrLedger`.
const IDENTIFIER = /^[a-z_][a-z0-9_]{0,62}$/;

/**
 * Words reserved by Postgres, MySQL or SQLite that a table may plausibly be named by (`order`,
 * `user`, `group`, `key`…): written unquoted, they are a syntax error. Not every reserved word of
 * every database: a small list of the common ones (the rarer ones fail at `ensureSchema` with the
 * database's own syntax error, before any callback). Each is refused as a table name by
 * PostgreSQL 15, MariaDB 10.11 or SQLite, except `database`, `groups` and `row`, listed for MySQL 8
 * (a name refused needlessly costs a rename; one let through, a failed start-up).
 */
// Pure, so a bundle that never checks a table name (the client's, which shares a chunk with the
// SQL entry) drops the list.
const RESERVED: ReadonlySet<string> = /* @__PURE__ */ new Set([
  ...['all', 'alter', 'analyze', 'and', 'any', 'array', 'as', 'asc', 'between', 'both', 'by', 'case', 'cast'],
  ...['check', 'collate', 'column', 'constraint', 'create', 'cross', 'current_date', 'current_time'],
  ...['current_timestamp', 'current_user', 'database', 'default', 'delete', 'desc', 'distinct', 'do', 'drop'],
  ...['else', 'end', 'except', 'exists', 'false', 'fetch', 'for', 'foreign', 'from', 'full', 'grant', 'group'],
  ...['groups', 'having', 'in', 'index', 'inner', 'insert', 'intersect', 'interval', 'into', 'is', 'join', 'key'],
  ...['keys', 'leading', 'left', 'like', 'limit', 'natural', 'not', 'null', 'offset', 'on', 'only', 'or', 'order'],
  ...['outer', 'over', 'primary', 'range', 'rank', 'references', 'replace', 'returning', 'right', 'row', 'rows'],
  ...['select', 'session_user', 'set', 'some', 'table', 'then', 'to', 'trailing', 'transaction', 'true', 'union'],
  ...['unique', 'update', 'user', 'using', 'values', 'when', 'where', 'window', 'with'],
]);

/** A checked table name: as written (maybe `schema.table`), and its last part. */
export interface TableName {
  readonly qualified: string;
  readonly bare: string;
}

/**
 * The table's name, checked: one identifier, or `schema.table`, each `[a-z_][a-z0-9_]{0,62}`
 * (lower case: Postgres folds the ledger's unquoted name, so a capital would name two tables) and
 * none of the common SQL reserved words (`order`, `user`, `group`, `key`…; a small list of those
 * Postgres, MySQL and SQLite reserve, not all of them). Anything else is a ConfigurationError
 * before any SQL is sent. The ledger, the payouts outbox and the Drizzle tables all check it.
 *
 * @example
 * ```ts
 * checkTableName('payments.webhook_ledger'); // { qualified: 'payments.webhook_ledger', bare: 'webhook_ledger' }
 * checkTableName('MyrLedger'); // throws ConfigurationError: lower case only
 * ```
 */
export function checkTableName(table: unknown): TableName {
  const parts = typeof table === 'string' ? table.split('.') : [];
  if (parts.length < 1 || parts.length > 2 || !parts.every((part) => IDENTIFIER.test(part))) {
    const capitals = parts.some((part) => IDENTIFIER.test(part.toLowerCase()) && part !== part.toLowerCase());
    throw new ConfigurationError(
      capitals
        ? `table must be lower case (${String(table).toLowerCase()}, not ${String(table)}): Postgres folds the unquoted name the ledger writes to lower case, while a tool that quotes it keeps the capitals, so the two would be different tables. A table of that name already holding rows (MySQL on Linux keeps the capitals): rename it first (ALTER TABLE ${String(table)} RENAME TO ${String(table).toLowerCase()}), or the lower-case name starts an empty table`
        : "table must be an SQL identifier in lower case ([a-z_][a-z0-9_]{0,62}), optionally schema-qualified (schema.table); it is written into the ledger's SQL unquoted",
      'table',
    );
  }
  const reserved = parts.find((part) => RESERVED.has(part));
  if (reserved !== undefined) {
    throw new ConfigurationError(
      `table must not be the SQL reserved word ${reserved}: it is written into the SQL unquoted, where it is a syntax error (name it, say, shop_${reserved})`,
      'table',
    );
  }
  return { qualified: parts.join('.'), bare: parts.at(-1) as string };
}

/**
 * On SQLite the ledger and the outbox work on a connection of their own to the file, which has
 * its `main` schema and `temp`, a schema of that connection alone, empty after a restart (a
 * payout staged there would be debited and never paid; a callback handled there, handled again).
 * `main.table` is the table itself; any other schema is a ConfigurationError.
 *
 * @example
 * ```ts
 * checkSqliteSchema(checkTableName('main.myr_payouts')); // passes
 * checkSqliteSchema(checkTableName('temp.myr_payouts')); // throws ConfigurationError
 * ```
 */
export function checkSqliteSchema(name: TableName): void {
  const schema = name.qualified === name.bare ? 'main' : name.qualified.slice(0, -name.bare.length - 1);
  if (schema !== 'main')
    throw new ConfigurationError(
      `on SQLite the table must be in the database file (no schema, or main): ${schema} is ${schema === 'temp' ? "a schema of the ledger's own connection alone, empty after a restart" : 'no schema of the connection the ledger opens on the file'}`,
      'table',
    );
}
