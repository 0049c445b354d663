/**
 * Whether the ledger or the payout outbox may run on its tables: `ensureSchema` creates them when
 * asked (safe when several processes do it at once) and always checks each is the table it needs,
 * refusing one that is missing or differs with a ConfigurationError that names what differs and
 * the statement that fixes it. A deployment that migrates with its own tool checks only (`create:
 * false`) at start-up: a table its schema tool dropped is then a loud refusal, never a silent
 * empty ledger that would fulfil every resent callback again, and a table without a column the
 * outbox writes is refused before a debit is staged beside a payout that could never be sent.
 *
 * @module
 */
import { ConfigurationError } from '../core/errors/base.js';
import type { Statement } from './dialects/dialect.js';
import { SCHEMA_LOCK } from './dialects/postgres/session.js';
import { columnDifferences, type ColumnDifference, type DescribedColumn, type TableColumn } from './schema-check.js';
import { transaction, type SqlClient } from './sql-client.js';

// Schema changes wait longer than a callback: 4 processes may create the table at once.
const SCHEMA_LOCK_TIMEOUT_MS = 30_000;

/** Options of `SqlLedger.ensureSchema` and `SqlPayouts.ensureSchema`. */
export interface EnsureSchemaOptions {
  /**
   * Whether to create the tables and their indexes when absent. `false`: only check the tables
   * your migration tool made (and refuse them, with the fix, when one is missing or differs).
   *
   * @default true
   * @example
   * ```ts
   * await ledger.ensureSchema({ create: false }); // at start-up, after your migrations ran
   * await payouts.ensureSchema({ create: false }); // the same for the payout outbox's two tables
   * ```
   */
  create?: boolean | undefined;
}

/** One table to check: its name, the columns it needs, and how the dialect describes and fixes it. */
export interface CheckedTable {
  /** The table's checked name, as written (maybe `schema.table`). */
  readonly name: string;
  readonly columns: readonly TableColumn[];
  /** One row per column of the table, as the database describes it; no row: no table. */
  readonly describe: Statement<null>;
  /** The statement that adds a missing column, or gives one that differs its definition. */
  readonly fixColumn: (difference: ColumnDifference) => string;
}

/** The tables of one store, for {@link ensureSchema}. */
export interface StoreTables {
  /** Who needs them, as the refusal says it: `the ledger`, `the payout outbox`. */
  readonly owner: string;
  /** The DDL that creates them, in order; idempotent. */
  readonly schema: readonly string[];
  /** The tables, the first one's name the lock's (Postgres). */
  readonly tables: readonly CheckedTable[];
}

/**
 * Creates the store's tables and indexes if absent (`create`, the default; on Postgres under an
 * advisory lock on the first table's name), then checks each table: every column the store needs,
 * of a type that holds what it writes, NOT NULL where it must be, the key the primary key (on
 * MySQL compared byte for byte). Anything else is a ConfigurationError naming each difference and
 * the statement that fixes it; nothing is altered behind the merchant's migrations.
 */
export async function ensureSchema<Tx>(
  client: SqlClient<Tx>,
  { owner, schema, tables }: StoreTables,
  options: EnsureSchemaOptions = {},
): Promise<void> {
  const create = options.create ?? true;
  if (typeof create !== 'boolean') throw new ConfigurationError('create must be true or false', 'create');
  // A table that differs may fail its own DDL (an index on a column it lacks): the check then
  // says what differs and how to fix it, rather than the database's bare error.
  let createFailed: { readonly error: unknown } | undefined;
  if (create) {
    try {
      await transaction(client, SCHEMA_LOCK_TIMEOUT_MS, async (session) => {
        if (client.dialect === 'postgres') await session.query(SCHEMA_LOCK, [`myr-gateway:${tables[0]?.name}`]);
        for (const statement of schema) await session.query(statement, []);
      });
    } catch (error) {
      createFailed = { error };
    }
  }
  const described = await transaction(client, SCHEMA_LOCK_TIMEOUT_MS, async (session) => {
    const answers: (readonly DescribedColumn[])[] = [];
    for (const { describe } of tables) answers.push((await session.query(describe.text, describe.params(null))).rows);
    return answers;
  });
  const missing = tables.filter((_table, index) => described[index]?.length === 0).map(({ name }) => name);
  // What differs in the tables there comes first: it is what made the DDL fail, if it failed.
  const refusals = tables.flatMap((table, index) => {
    const found = described[index] ?? [];
    const differences = found.length === 0 ? [] : columnDifferences(table.columns, found);
    if (differences.length === 0) return [];
    const what = differences.map(({ column, problem }) => `${column.name} ${problem}`).join('; ');
    const fixes = differences.map((difference) => `${table.fixColumn(difference)};`).join(' ');
    return [`${owner}'s table ${table.name} is not the table ${owner} needs: ${what}. Fix it with: ${fixes}`];
  });
  if (refusals.length > 0) {
    const rest = missing.length === 0 ? '' : ` ${missing.join(' and ')} does not exist yet either.`;
    throw new ConfigurationError(`${refusals.join(' ')}${rest}`, 'table');
  }
  // Not created (a role without CREATE): the database's own error says why.
  if (createFailed !== undefined) throw createFailed.error;
  if (missing.length > 0) {
    const which =
      missing.length === 1 ? `table ${missing[0]} does not exist` : `tables ${missing.join(' and ')} do not exist`;
    const it = missing.length === 1 ? 'it' : 'them';
    throw new ConfigurationError(
      `${owner}'s ${which} (a schema tool that does not know ${it} drops ${it}): create ${it} with ${schema.map((statement) => `${statement};`).join(' ')} (or call ensureSchema() without create: false)`,
      'table',
    );
  }
}
