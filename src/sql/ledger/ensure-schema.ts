/**
 * Whether the ledger may run on its table: `ensureSchema` creates the table when asked (safe when
 * several processes do it at once) and always checks it is the table the ledger needs, refusing
 * one that is missing or differs with a ConfigurationError that names what differs and the
 * statement that fixes it. A deployment that migrates with its own tool checks only (`create:
 * false`) at start-up: a table its schema tool dropped is then a loud refusal, never a silent
 * empty ledger that would fulfil every resent callback again.
 *
 * @module
 */
import { ConfigurationError } from '../../core/errors/base.js';
import type { LedgerStatements } from '../dialects/dialect.js';
import { SCHEMA_LOCK } from '../dialects/postgres/session.js';
import type { SqlClient } from '../sql-client.js';
import { transaction } from './prune.js';
import { columnDifferences, type DescribedColumn } from '../schema-check.js';

// Schema changes wait longer than a callback: 4 processes may create the table at once.
const SCHEMA_LOCK_TIMEOUT_MS = 30_000;

/** Options of `SqlLedger.ensureSchema`. */
export interface EnsureSchemaOptions {
  /**
   * Whether to create the table and its index when absent. `false`: only check the table your
   * migration tool made (and refuse it, with the fix, when it is missing or differs).
   *
   * @default true
   * @example
   * ```ts
   * await ledger.ensureSchema({ create: false }); // at start-up, after your migrations ran
   * ```
   */
  create?: boolean | undefined;
}

/**
 * Creates the ledger's table and index if absent (`create`, the default; on Postgres under an
 * advisory lock on the table's name), then checks the table: every column the ledger needs, of a
 * type that holds what it writes, NOT NULL where it must be, the key the primary key (on MySQL
 * compared byte for byte). Anything else is a ConfigurationError naming each difference and the
 * statement that fixes it; nothing is altered behind the merchant's migrations.
 */
export async function ensureSchema<Tx>(
  client: SqlClient<Tx>,
  sql: LedgerStatements,
  table: string,
  options: EnsureSchemaOptions = {},
): Promise<void> {
  const create = options.create ?? true;
  if (typeof create !== 'boolean') throw new ConfigurationError('create must be true or false', 'create');
  const described = await transaction(client, SCHEMA_LOCK_TIMEOUT_MS, async (session) => {
    if (create) {
      if (client.dialect === 'postgres') await session.query(SCHEMA_LOCK, [`myr-gateway:${table}`]);
      for (const statement of sql.schema) await session.query(statement, []);
    }
    const answer: { readonly rows: readonly DescribedColumn[] } = await session.query(
      sql.describe.text,
      sql.describe.params(null),
    );
    return answer.rows;
  });
  if (described.length === 0) {
    throw new ConfigurationError(
      `the ledger's table ${table} does not exist (a schema tool that does not know it drops it): create it with ${sql.schema.map((statement) => `${statement};`).join(' ')} (or call ensureSchema() without create: false)`,
      'table',
    );
  }
  const differences = columnDifferences(sql.columns, described);
  if (differences.length > 0) {
    const what = differences.map(({ column, problem }) => `${column.name} ${problem}`).join('; ');
    const fixes = differences.map(({ column, exists }) => `${sql.fixColumn(column, exists)};`).join(' ');
    throw new ConfigurationError(
      `the ledger's table ${table} is not the table the ledger needs: ${what}. Fix it with: ${fixes}`,
      'table',
    );
  }
}
