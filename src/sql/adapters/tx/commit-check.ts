/**
 * Whether the ledger's COMMIT must carry its check that the transaction is still the ledger's,
 * from what the work did through a `tx` that sees each statement it sends (node-postgres's and
 * mysql2's). After only plain reads and writes (plain-statement.ts) that were answered, the work
 * cannot have ended the transaction: COMMIT goes without the check. After anything else (a
 * statement that is not plain, one still running when COMMIT is due, one that did not answer a
 * promise, a failure the driver says may end the transaction, whatever the adapter notes with
 * {@link CommitCheck.touch}), the check goes with COMMIT.
 *
 * @module
 */
import { keepsTransaction } from './plain-statement.js';

/**
 * What the work's statements through one `tx` said of the ledger's transaction. One per run; a
 * statement costs no allocation here beyond the promise its `then` makes (the handlers are the
 * run's own).
 */
export class CommitCheck {
  #pending = 0;
  #touched = false;
  readonly #failureEnds: (error: unknown) => boolean;
  readonly #settled = (): void => {
    this.#pending -= 1;
  };
  readonly #failed = (error: unknown): void => {
    this.#pending -= 1;
    if (this.#failureEnds(error)) this.#touched = true;
  };

  /**
   * @param failureEnds Whether a statement that failed with `error` may have ended the
   * transaction (MySQL: any may roll it back, and the adapter reads its errno there; Postgres: a
   * failure leaves the transaction aborted, which COMMIT's answer says).
   */
  constructor(failureEnds: (error: unknown) => boolean) {
    this.#failureEnds = failureEnds;
  }

  /**
   * Sends one statement of the work as it is (`send` called on `self` with `args`, its answer
   * given back untouched) and counts it until it settles. `mayCarryMore`: the text looks plain
   * but its values may add a statement (mysql2's `multipleStatements` with raw values).
   *
   * @example
   * ```ts
   * const check = new CommitCheck(() => false);
   * await check.send(client.query, client, ['UPDATE orders SET paid = true WHERE id = $1', [7]], false);
   * check.needed(); // false
   * ```
   */
  send(send: unknown, self: object, args: unknown[], mayCarryMore: boolean): unknown {
    if (typeof send !== 'function') return undefined;
    if (mayCarryMore || !keepsTransaction(args[0])) this.#touched = true;
    const sent: unknown = Reflect.apply(send, self, args);
    if (!(sent instanceof Promise)) {
      this.#touched = true;
      return sent;
    }
    this.#pending += 1;
    sent.then(this.#settled, this.#failed);
    return sent;
  }

  /** The work did something other than a statement through `tx` that may end the transaction. */
  touch(): void {
    this.#touched = true;
  }

  /** Whether COMMIT must check that the transaction is still the ledger's. */
  needed(): boolean {
    return this.#touched || this.#pending > 0;
  }
}
