/**
 * What the schema tests do as a merchant's migration tool would: run each statement of
 * `schemaSql()` (or one of their own) in a transaction of its own, and read the refusal
 * `ensureSchema` answers.
 */
import type { SqlClient } from '../../src/sql/index.js';

/** Sends `statement` in a transaction of its own, as a merchant's migration would (rolled back if it fails). */
export async function migrate<Tx>(client: SqlClient<Tx>, statement: string): Promise<void> {
  const session = await client.begin(5_000);
  try {
    await session.query(statement, []);
  } catch (error) {
    await session.rollback(error);
    throw error;
  }
  await session.commit(undefined);
}

/** The statements of a `schemaSql()` text, one by one. */
export const statementsOf = (ddl: string): string[] => ddl.split(';\n').filter((text) => text.trim() !== '');

/** What `promise` rejected with, or undefined when it resolved. */
export const refusal = (promise: Promise<unknown>): Promise<unknown> =>
  promise.then(
    () => undefined,
    (error: unknown) => error,
  );
