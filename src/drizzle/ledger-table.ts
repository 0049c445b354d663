/**
 * The SQL ledger's table as Drizzle table definitions, one per dialect, for the merchant's
 * Drizzle schema: `drizzle-kit push` and `drizzle-kit generate` compare the database with that
 * schema and drop (or never create) any table it lacks. With the ledger's table in it, they keep
 * it, and create it in the migrations they write (on Postgres and SQLite; on MySQL and MariaDB
 * drizzle-kit rewrites the table instead, so it is kept out: see `mysqlLedgerTable`). Each
 * definition is the DDL of `SqlLedger.schemaSql(dialect)`, column for column.
 *
 * @module
 */
import {
  bigint as pgBigint,
  index as pgIndex,
  pgSchema,
  pgTable,
  smallint as pgSmallint,
  varchar as pgVarchar,
} from 'drizzle-orm/pg-core';
import {
  bigint as myBigint,
  customType,
  index as myIndex,
  mysqlSchema,
  mysqlTable,
  smallint as mySmallint,
} from 'drizzle-orm/mysql-core';
import { index as liteIndex, integer, sqliteTable, text } from 'drizzle-orm/sqlite-core';
import { checkTableName } from '../sql/dialects/table-name.js';

/** The ledger's table unless `SqlLedger`'s `table` option names another. */
const DEFAULT_TABLE = 'myr_webhook_ledger';

/** A ledger's key on MySQL: compared byte for byte (a case-insensitive collation would make `PAY_AB12` and `PAY_ab12` one key). */
const binaryKey = customType<{ data: string; driverData: string }>({
  dataType: () => 'varchar(255) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin',
});

/**
 * `table` as `SqlLedger`'s `table` option takes it, `[schema.]name`, checked by the same rule
 * (lower case, no reserved word: a ConfigurationError otherwise) and split. Drizzle quotes the
 * names it writes and the ledger does not, so a name with capitals would be two tables on Postgres.
 */
function nameOf(table: string): { schema: string | undefined; name: string } {
  const { qualified, bare } = checkTableName(table);
  return qualified === bare ? { schema: undefined, name: bare } : { schema: qualified.split('.')[0], name: bare };
}

function pgColumns() {
  return {
    ledger_key: pgVarchar('ledger_key', { length: 255 }).primaryKey(),
    mark_rank: pgSmallint('mark_rank'),
    handled_statuses: pgSmallint('handled_statuses').notNull().default(0),
    expires_at: pgBigint('expires_at', { mode: 'number' }).notNull(),
    claim_id: pgBigint('claim_id', { mode: 'number' }),
  };
}

/**
 * The ledger's table for a Drizzle schema on Postgres (node-postgres, postgres.js, any Drizzle
 * driver). Export it from the schema file drizzle-kit reads, under the `table` the ledger uses
 * (default `myr_webhook_ledger`; `schema.table` for another Postgres schema; lower case, as
 * Postgres folds the ledger's unquoted name: a name with capitals is a ConfigurationError).
 *
 * @example
 * ```ts
 * // src/db/schema.ts, the file drizzle.config.ts names
 * import { pgLedgerTable } from 'myr-gateway/drizzle';
 * export const myrWebhookLedger = pgLedgerTable();
 * ```
 */
export function pgLedgerTable(table: string = DEFAULT_TABLE) {
  const { schema, name } = nameOf(table);
  const expires = `${name}_expires`;
  if (schema === undefined) return pgTable(name, pgColumns(), (t) => [pgIndex(expires).on(t.expires_at)]);
  return pgSchema(schema).table(name, pgColumns(), (t) => [pgIndex(expires).on(t.expires_at)]);
}

function mysqlColumns() {
  return {
    ledger_key: binaryKey('ledger_key').notNull().primaryKey(),
    mark_rank: mySmallint('mark_rank'),
    handled_statuses: mySmallint('handled_statuses').notNull().default(0),
    expires_at: myBigint('expires_at', { mode: 'number' }).notNull(),
    claim_id: myBigint('claim_id', { mode: 'number' }),
  };
}

/**
 * The ledger's table as Drizzle columns on MySQL or MariaDB (mysql2), for your own queries. Its
 * key is compared byte for byte (`utf8mb4_bin`), as the ledger needs. Keep it out of the schema
 * drizzle-kit pushes: drizzle-kit 0.31 reads the key's collation (and MariaDB's `smallint(6)`)
 * as a changed type on every push and `push --force` truncates the table, forgetting every
 * handled payment. Exclude the ledger with `tablesFilter: ['!myr_webhook_ledger']` and create it
 * with `SqlLedger.ensureSchema()` or docs/migrations/mysql.sql (docs/ledger.md, "Set up").
 *
 * @example
 * ```ts
 * import { mysqlLedgerTable } from 'myr-gateway/drizzle';
 * // in a module drizzle.config.ts does not name as its schema
 * const myrWebhookLedger = mysqlLedgerTable();
 * ```
 */
export function mysqlLedgerTable(table: string = DEFAULT_TABLE) {
  const { schema, name } = nameOf(table);
  // MySQL's index names are per table: the one the ledger's own DDL gives it.
  if (schema === undefined)
    return mysqlTable(name, mysqlColumns(), (t) => [myIndex('expires_at_idx').on(t.expires_at)]);
  return mysqlSchema(schema).table(name, mysqlColumns(), (t) => [myIndex('expires_at_idx').on(t.expires_at)]);
}

/**
 * The ledger's table for a Drizzle schema on SQLite (`node:sqlite`, better-sqlite3, libSQL).
 * Export it from the schema file drizzle-kit reads.
 *
 * @example
 * ```ts
 * import { sqliteLedgerTable } from 'myr-gateway/drizzle';
 * export const myrWebhookLedger = sqliteLedgerTable();
 * ```
 */
export function sqliteLedgerTable(table: string = DEFAULT_TABLE) {
  const { name } = nameOf(table);
  return sqliteTable(
    name,
    {
      ledger_key: text('ledger_key').primaryKey(),
      mark_rank: integer('mark_rank'),
      handled_statuses: integer('handled_statuses').notNull().default(0),
      expires_at: integer('expires_at').notNull(),
      claim_id: integer('claim_id'),
    },
    (t) => [liteIndex(`${name}_expires`).on(t.expires_at)],
  );
}
