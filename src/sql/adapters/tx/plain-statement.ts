/**
 * Which statements of the work cannot end the ledger's transaction: after only those (sent through
 * `tx`, and answered), COMMIT needs no check that the transaction is still the ledger's. Shared by
 * the mysql2 and node-postgres adapters (through commit-check.ts), whose `tx` sees each statement it sends.
 *
 * @module
 */

/**
 * One plain read or write (a function it calls may not commit: both databases refuse that), with
 * no second statement after it. A comment before it, `CALL`, `SET`, DDL, transaction control and
 * anything else does not match: COMMIT checks the transaction after those.
 */
const KEEPS_TRANSACTION = /^\s*(?:SELECT|INSERT|UPDATE|DELETE|REPLACE|WITH|VALUES|TABLE)\b[^;]*;?\s*$/i;

/** The statement text of a driver's query arguments: a string, or a query object's `sql` (mysql2) or `text` (node-postgres). */
function statementText(first: unknown): string | undefined {
  if (typeof first === 'string') return first;
  if (typeof first !== 'object' || first === null) return undefined;
  const text: unknown = Reflect.get(first, 'sql') ?? Reflect.get(first, 'text');
  return typeof text === 'string' ? text : undefined;
}

/**
 * Whether `first` (the first argument of `query`/`execute`) is a statement that cannot end a
 * transaction when it succeeds.
 *
 * @example
 * ```ts
 * keepsTransaction('UPDATE orders SET paid = 1 WHERE id = ?'); // true
 * keepsTransaction('COMMIT'); // false
 * ```
 */
export function keepsTransaction(first: unknown): boolean {
  const text = statementText(first);
  return text !== undefined && KEEPS_TRANSACTION.test(text);
}
