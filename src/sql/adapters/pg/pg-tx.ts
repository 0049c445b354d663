/**
 * What the work may do with its node-postgres `tx`, and whether COMMIT must check that the
 * transaction is still the ledger's. The work's `tx` is the run's pooled client behind a Proxy:
 * its `query` is refused once the run has ended, its `release()` does nothing, and what it sends
 * is counted (commit-check.ts); a log shows it without the client's connection parameters.
 *
 * @module
 */
import { ConfigurationError } from '../../../core/errors/base.js';
import { CommitCheck } from '../tx/commit-check.js';
import type { PgClientLike } from './from-pg.js';
import { secretFree, showsItself } from '../tx/secret-free.js';

/** A failed statement leaves the transaction aborted, not ended: COMMIT is answered ROLLBACK (see from-pg.ts). */
const failureLeavesAborted = () => false;

/** node-postgres's members that send nothing and reach nothing underneath: the work may use them as it likes. */
const SENDS_NOTHING = new Set<string | symbol>(['escapeLiteral', 'escapeIdentifier']);

/**
 * What a statement sent through `tx` before the run's claim is refused with (nothing is sent): a
 * ledger run's BEGIN leaves with its claim, and `tx` is handed out only after it.
 */
export function usedBeforeClaim(): ConfigurationError {
  return new ConfigurationError(
    "a query was sent through the ledger's tx before its claim (nothing was sent): tx is the handler's, once the run is claimed",
    'tx',
  );
}

/**
 * What `tx` shows of itself in a log (util.inspect, with hidden properties too) or in JSON: which
 * session it is, never the client's connection parameters (node-postgres keeps the password there
 * as a hidden property).
 */
class PgTx {
  constructor(
    /** The server process of the session (node-postgres's `processID`). */
    readonly processID: unknown,
  ) {}
}

/**
 * The work's `tx`: the pooled client, whose `query` is refused (nothing is sent) once the run has
 * ended, when the client is back in the pool, where a statement would run on its own or in
 * another callback's transaction; and whose `release()` does nothing: the ledger gives the client
 * back, and a release by the work would hand it to another caller mid-transaction. It also tells
 * whether the work may have ended the ledger's transaction: after plain reads and writes that
 * were answered (commit-check.ts), it cannot have (one that failed leaves the transaction
 * aborted, which COMMIT's answer says), so COMMIT goes without its check; after anything else
 * (another statement, one still running, a cursor or a callback, another member of the client),
 * the check goes with COMMIT.
 */
export function guardedTx<C extends PgClientLike>(
  client: C,
  refusal: () => Error | undefined,
): { readonly tx: C; mayHaveEnded(): boolean } {
  const check = new CommitCheck(failureLeavesAborted);
  const refuse = (refused: Error, args: readonly unknown[]): unknown => {
    const [first] = args;
    const callback = args.at(-1);
    if (typeof callback === 'function') {
      queueMicrotask(() => void Reflect.apply(callback, undefined, [refused]));
      return undefined;
    }
    // A submittable (a cursor, a stream) is answered through its own error path, as node-postgres does.
    const handleError: unknown =
      typeof first === 'object' && first !== null ? Reflect.get(first, 'handleError') : undefined;
    if (typeof handleError === 'function') {
      queueMicrotask(() => void Reflect.apply(handleError, first, [refused]));
      return first;
    }
    return Promise.reject(refused);
  };
  const show = () => new PgTx(Reflect.get(client, 'processID'));
  // The trap works on the client itself: the target only changes what util.inspect shows.
  const tx: C = secretFree(client, show, {
    get(_, key) {
      if (key === 'release') return () => undefined;
      if (showsItself(key)) return show;
      const value: unknown = Reflect.get(client, key);
      if (key === 'query' && typeof value === 'function')
        return (...args: unknown[]): unknown => {
          const refused = refusal();
          return refused === undefined ? check.send(value, client, args, false) : refuse(refused, args);
        };
      // A method, or an object underneath (the connection): it may send past this Proxy.
      if (!SENDS_NOTHING.has(key) && (typeof value === 'function' || (typeof value === 'object' && value !== null)))
        check.touch();
      return value;
    },
  });
  return { tx, mayHaveEnded: () => check.needed() };
}
