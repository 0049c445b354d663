/**
 * What `prune` deletes (expired records: never a payment's row, kept for good) and how: in batches
 * that give way to the claims running beside them, each batch in a transaction of its own.
 *
 * @module
 */
import { ConfigurationError } from '../../core/errors/base.js';
import { milliseconds } from '../../core/milliseconds.js';
import { isConflict } from '../database-errors.js';
import type { Statement } from '../dialects/dialect.js';
import { transaction, type SqlClient, type SqlSession } from '../sql-client.js';

/** Options of `SqlLedger.prune`. */
export interface PruneOptions {
  /** Only rows whose record expired at least this many ms ago. @default 0 */
  olderThanMs?: number | undefined;
  /** Rows deleted per transaction, so a large backlog never holds locks for long. @default 1000 */
  batchSize?: number | undefined;
}

/** How many times a batch of `prune` is tried when it meets the claims running beside it. */
const PRUNE_TRIES = 3;

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
  if (!Number.isInteger(batchSize) || batchSize < 1 || batchSize > 100_000)
    throw new ConfigurationError('batchSize must be a whole number from 1 to 100000', 'batchSize');
  const before = Date.now() - olderThanMs;
  let total = 0;
  for (;;) {
    const deleted = await batch(
      client,
      lockTimeoutMs,
      async (session) => (await session.query(statement.text, statement.params({ before, batch: batchSize }))).affected,
    );
    total += deleted;
    if (deleted < batchSize) return total;
  }
}

async function batch<Tx>(
  client: SqlClient<Tx>,
  lockTimeoutMs: number,
  body: (session: SqlSession<Tx>) => Promise<number>,
): Promise<number> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await transaction(client, lockTimeoutMs, body);
    } catch (error) {
      if (attempt >= PRUNE_TRIES || !isConflict(error)) throw error;
      await new Promise((resolve) => setTimeout(resolve, 50 * attempt));
    }
  }
}
