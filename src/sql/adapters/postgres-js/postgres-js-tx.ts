/**
 * The work's postgres.js `tx`: the reserved connection, whose queries are refused (rejected, never
 * sent) once the run no longer holds a live connection, and which tells whether the work may have
 * ended the ledger's transaction. Only plain reads and writes (plain-statement.ts) whose values
 * are plain values, settled by the time the work returned, cannot have: then COMMIT goes without
 * the ledger's check. A statement that failed needs none either (Postgres aborts the transaction,
 * and COMMIT then answers ROLLBACK). Anything else (a statement that is not plain, a fragment or
 * helper among the values, a query still running, any other method of the connection) sends the
 * check with COMMIT.
 *
 * @module
 */
import { ConfigurationError } from '../../../core/errors/base.js';
import { keepsTransaction } from '../tx/plain-statement.js';

/** A postgres.js query (a Promise that runs its handler once awaited or executed). */
interface PendingQueryLike {
  handler: ((query: unknown) => unknown) & { debug?: unknown };
  reject(error: unknown): void;
}

/** The reserved connection's methods that answer a query made on it (the others make fragments or values). */
const QUERY_METHODS = new Set<string | symbol>(['unsafe', 'notify']);

/**
 * `file` reads its file and sends the query when the read ends, past the check made when the
 * query runs: a run whose time passed meanwhile has given its connection back, and the query
 * would go out on another run's transaction or in autocommit (a write landing after a rollback,
 * and again on the gateway's retry). So `tx` has no `file`.
 */
function fileRefused(): Promise<never> {
  return Promise.reject(
    new ConfigurationError(
      "tx.file is not available in a ledger run: postgres.js sends its query after reading the file, when the run may be over and its connection another run's; read the file yourself and send its text with tx.unsafe(text, params)",
      'tx',
    ),
  );
}

const isPendingQuery = (value: unknown): value is PendingQueryLike =>
  value instanceof Promise &&
  typeof Reflect.get(value, 'handler') === 'function' &&
  typeof Reflect.get(value, 'reject') === 'function';

/** A value a statement binds as it is: never SQL of its own (a fragment, a helper, an array). */
const plainValue = (value: unknown): boolean =>
  value === null ||
  value === undefined ||
  typeof value === 'string' ||
  typeof value === 'number' ||
  typeof value === 'bigint' ||
  typeof value === 'boolean' ||
  value instanceof Date;

/** Whether a query postgres.js is about to run is one plain read or write with plain values. */
function plainQuery(query: object): boolean {
  const strings: unknown = Reflect.get(query, 'strings');
  const args: unknown = Reflect.get(query, 'args');
  return (
    Array.isArray(strings) &&
    Array.isArray(args) &&
    strings.every((part) => typeof part === 'string') &&
    args.every(plainValue) &&
    keepsTransaction(strings.join('$1'))
  );
}

/**
 * The work's `tx` over `reserved`, and whether COMMIT must check that the transaction is still
 * the ledger's. postgres.js reconnects a closed connection object for whoever asks next, so a
 * statement the work sent after the close ran in another run's transaction or in autocommit (a
 * second fulfilment), or met its write to a null socket (an uncaught TypeError). Each query made
 * through `tx` is checked when it runs, not when it is made: `refusal` says why it may not.
 *
 * @example
 * ```ts
 * const work = guardedTx(reserved, () => (open ? undefined : usedAfterRun()));
 * await handler(work.tx);
 * const text = work.mayHaveEnded() ? CHECK_THEN_COMMIT : 'COMMIT';
 * ```
 */
export function guardedTx<R extends object>(
  reserved: R,
  refusal: () => Error | undefined,
): { readonly tx: R; mayHaveEnded(): boolean } {
  let touched = false;
  let running = 0;
  const settled = () => void (running -= 1);
  const guard = (value: unknown) => {
    if (isPendingQuery(value)) {
      const { handler } = value;
      const checked = (query: unknown) => {
        const refused = refusal();
        if (refused !== undefined) return value.reject(refused);
        if (typeof query !== 'object' || query === null || !plainQuery(query)) touched = true;
        running += 1;
        // The native then: postgres.js's own would run the query again.
        void Promise.prototype.then.call(value, settled, settled);
        return Reflect.apply(handler, query, [query]);
      };
      value.handler = Object.assign(checked, { debug: handler.debug });
    }
    return value;
  };
  const tx = new Proxy(reserved, {
    apply: (target, self, args) =>
      typeof target === 'function' ? guard(Reflect.apply(target, self, args)) : undefined,
    get(target, key) {
      const value: unknown = Reflect.get(target, key);
      if (typeof value !== 'function') return value;
      if (key === 'file') return fileRefused;
      if (QUERY_METHODS.has(key)) return (...args: unknown[]) => guard(Reflect.apply(value, target, args));
      // Any other method (begin, savepoint, release, a helper…): COMMIT checks.
      touched = true;
      return value;
    },
  });
  return { tx, mayHaveEnded: () => touched || running > 0 };
}
