/**
 * The ledger's upkeep, outside the path of a callback: creating its table (safe when several
 * processes do it at once) and deleting expired records in batches that give way to the claims
 * running beside them.
 *
 * @module
 */
import { ConfigurationError } from '../../core/errors/base.js';
import { milliseconds } from '../../core/milliseconds.js';
import { columnMissing, isConflict } from '../database-errors.js';
import type { LedgerStatements, Statement } from '../dialects/dialect.js';
import { SCHEMA_LOCK } from '../dialects/postgres/session.js';
import type { SqlClient, SqlSession } from '../sql-client.js';

/**
 * The refusal of a table created by an earlier build, which lacks `claim_id`: names the statement
 * that adds it (the same in every dialect). `ensureSchema` throws it, and a run whose claim met
 * such a table answers it (unavailable: nothing acknowledged), rather than a database error that
 * reads like an outage.
 */
export const withoutClaimId = (table: string): ConfigurationError =>
  new ConfigurationError(
    `the ledger's table ${table} was created by an earlier build of myr-gateway and has no column claim_id (each run's claim is told apart by it): run ALTER TABLE ${table} ADD COLUMN claim_id BIGINT, then ensureSchema again`,
    'table',
  );

/** Options of `SqlLedger.prune`. */
export interface PruneOptions {
  /** Only rows whose record expired at least this many ms ago. @default 0 */
  olderThanMs?: number | undefined;
  /** Rows deleted per transaction, so a large backlog never holds locks for long. @default 1000 */
  batchSize?: number | undefined;
}

// Schema changes wait longer than a callback: 4 processes may create the table at once.
const SCHEMA_LOCK_TIMEOUT_MS = 30_000;
/** How many times a batch of `prune` is tried when it meets the claims running beside it. */
const PRUNE_TRIES = 3;

/** Runs `body` in one transaction of its own: committed when it returns, rolled back when it throws. */
async function transaction<Tx, R>(client: SqlClient<Tx>, lockTimeoutMs: number, body: (session: SqlSession<Tx>) => Promise<R>): Promise<R> {
  const session = await client.begin(lockTimeoutMs);
  let result: R;
  try {
    result = await body(session);
  } catch (error) {
    await session.rollback();
    throw error;
  }
  await session.commit(undefined);
  return result;
}

/**
 * Creates the ledger's table and index if absent; on Postgres under an advisory lock on the
 * table's name. A table an earlier build created lacks `claim_id` (CREATE TABLE IF NOT EXISTS
 * leaves it as it is, and MySQL and SQLite cannot add a column only if absent): refused with a
 * ConfigurationError naming the statement that adds it, rather than altered behind the
 * merchant's migrations. Without it every claim would fail, and no callback be acknowledged.
 */
export async function ensureSchema<Tx>(client: SqlClient<Tx>, sql: LedgerStatements, table: string): Promise<void> {
  await transaction(client, SCHEMA_LOCK_TIMEOUT_MS, async (session) => {
    if (client.dialect === 'postgres') await session.query(SCHEMA_LOCK, [`myr-gateway:${table}`]);
    for (const statement of sql.schema) await session.query(statement, []);
    try {
      await session.query(sql.probe, []);
    } catch (error) {
      throw columnMissing(error) ? withoutClaimId(table) : error;
    }
  });
}

/**
 * Deletes expired records `batchSize` at a time until a batch is not full; answers how many. A
 * batch that met the claims running beside it (a deadlock or a lock wait: MySQL locks a
 * payment's rows in another order than the expiry index) is tried again, up to three times in
 * all: rolled back, it deleted nothing.
 */
export async function pruneExpired<Tx>(
  client: SqlClient<Tx>,
  statement: Statement<{ readonly before: number; readonly batch: number }>,
  lockTimeoutMs: number,
  options: PruneOptions,
): Promise<number> {
  const olderThanMs = milliseconds(options.olderThanMs ?? 0, 'olderThanMs', 0);
  const batchSize = options.batchSize ?? 1000;
  if (!Number.isInteger(batchSize) || batchSize < 1 || batchSize > 100_000) throw new ConfigurationError('batchSize must be a whole number from 1 to 100000', 'batchSize');
  const before = Date.now() - olderThanMs;
  let total = 0;
  for (;;) {
    const deleted = await batch(client, lockTimeoutMs, async (session) => (await session.query(statement.text, statement.params({ before, batch: batchSize }))).affected);
    total += deleted;
    if (deleted < batchSize) return total;
  }
}

async function batch<Tx>(client: SqlClient<Tx>, lockTimeoutMs: number, body: (session: SqlSession<Tx>) => Promise<number>): Promise<number> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await transaction(client, lockTimeoutMs, body);
    } catch (error) {
      if (attempt >= PRUNE_TRIES || !isConflict(error)) throw error;
      await new Promise((resolve) => setTimeout(resolve, 50 * attempt));
    }
  }
}
