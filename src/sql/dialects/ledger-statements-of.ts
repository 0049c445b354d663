/**
 * The ledger's statements of a dialect, for a checked table: the one switch over the dialects.
 *
 * @module
 */
import type { LedgerStatements, SqlDialect } from './dialect.js';
import { mysqlLedger } from './mysql/ledger-statements.js';
import { postgresLedger } from './postgres/ledger-statements.js';
import { sqliteLedger } from './sqlite/ledger-statements.js';
import type { TableName } from './table-name.js';

/**
 * The statements of `dialect` for `table`. `guarded` (Postgres): the client sends the claim before
 * BEGIN's answer (postgres.js); its claims then fail unless they run in the ledger's transaction.
 */
export function ledgerStatementsOf(
  dialect: SqlDialect,
  { qualified, bare }: TableName,
  guarded = false,
): LedgerStatements {
  switch (dialect) {
    case 'postgres':
      return postgresLedger(qualified, bare, guarded);
    case 'mysql':
      return mysqlLedger(qualified);
    case 'sqlite':
      return sqliteLedger(qualified, bare);
  }
}
