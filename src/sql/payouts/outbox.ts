/**
 * What the payouts and their worker share: the client, its SQL, the table, the hooks, and how
 * the outbox opens a transaction whose `tx` `stage` and `settle` know.
 *
 * @module
 */
import type { SqlClient, SqlSession } from '../sql-client.js';
import type { PayoutRefusal, PayoutSettlement } from './options.js';
import { tracked } from './session-of-tx.js';
import type { PayoutStatements } from './statement-shape.js';

/** What the worker needs of the outbox (internal). */
export interface Outbox<Tx> {
  readonly client: SqlClient<Tx>;
  readonly sql: PayoutStatements;
  readonly table: string;
  readonly lockTimeoutMs: number;
  readonly onRefused: (refusal: PayoutRefusal, context: { readonly tx: Tx }) => unknown;
  readonly onSettled: (settlement: PayoutSettlement, context: { readonly tx: Tx }) => unknown;
}

/** Runs `work` in a transaction of the outbox's client whose `tx` `stage` and `settle` know. */
export async function transactionOf<Tx, T>(
  outbox: Outbox<Tx>,
  work: (session: SqlSession<Tx>) => T | Promise<T>,
): Promise<T> {
  const session = tracked(await outbox.client.begin(outbox.lockTimeoutMs));
  let value: T;
  try {
    value = await work(session);
  } catch (error) {
    await session.rollback(error);
    throw error;
  }
  await session.commit(undefined);
  return value;
}
