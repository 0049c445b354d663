/**
 * Which open transaction a merchant's `tx` belongs to: `SqlPayouts.stage(tx, …)` and
 * `settle(event, { tx })` write through the session that handed `tx` out, whichever opened it
 * (`payouts.transaction`, or the ledger's run of a callback or a `runOnce` job), so every adapter
 * works without code of its own. A session is known from when it is opened until it commits,
 * rolls back or is abandoned: a `tx` kept past that is refused, never written through.
 *
 * @module
 */
import type { SqlResult, SqlSession, SqlStatement } from '../sql-client.js';

const open = new WeakMap<object, SqlSession<unknown>>();

/**
 * `session`, known by its `tx` until it ends. The returned session is the one to drive: its
 * COMMIT, ROLLBACK and abandon forget the `tx` first, so nothing is staged after the end.
 *
 * @example
 * ```ts
 * const session = tracked(await client.begin(lockTimeoutMs));
 * ```
 */
export function tracked<Tx>(session: SqlSession<Tx>): SqlSession<Tx> {
  const { tx } = session;
  if ((typeof tx !== 'object' && typeof tx !== 'function') || tx === null) return session;
  const driven = new Tracked(session, tx);
  open.set(tx, driven);
  return driven;
}

/** A session known by its `tx` until it ends (a class: one per run, and closures per run are work per callback). */
class Tracked<Tx> implements SqlSession<Tx> {
  constructor(
    readonly session: SqlSession<Tx>,
    readonly tx: Tx & object,
  ) {}

  #forget(): void {
    if (open.get(this.tx) === this) open.delete(this.tx);
  }

  query(text: string, params: readonly unknown[]): Promise<SqlResult> {
    return this.session.query(text, params);
  }

  commit(held: SqlStatement | undefined): Promise<void> {
    this.#forget();
    return this.session.commit(held);
  }

  rollback(cause?: unknown): Promise<void> {
    this.#forget();
    return this.session.rollback(cause);
  }

  abandon(settled: Promise<unknown>): void {
    this.#forget();
    this.session.abandon(settled);
  }

  landed(): Promise<void> {
    return this.session.landed?.() ?? Promise.resolve();
  }
}

/**
 * The open session `tx` was handed out by, or undefined (not a transaction's `tx`, or its
 * transaction has ended).
 *
 * @example
 * ```ts
 * const session = sessionOf(tx);
 * if (session === undefined) throw notOpen();
 * ```
 */
export function sessionOf(tx: unknown): SqlSession<unknown> | undefined {
  return (typeof tx === 'object' || typeof tx === 'function') && tx !== null ? open.get(tx) : undefined;
}
