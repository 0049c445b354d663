/**
 * Which open transaction a merchant's `tx` belongs to: `SqlPayouts.stage(tx, …)` and
 * `settle(event, { tx })` write through the session that handed `tx` out, whichever opened it
 * (`payouts.transaction`, or the ledger's run of a callback or a `runOnce` job), so every adapter
 * works without code of its own. A session is known from when it is opened until it commits,
 * rolls back or is abandoned: a `tx` kept past that is refused, never written through.
 *
 * @module
 */
import type { SqlSession } from '../sql-client.js';

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
  const forget = () => {
    if (open.get(tx) === driven) open.delete(tx);
  };
  const driven: SqlSession<Tx> = {
    tx,
    query: (text, params) => session.query(text, params),
    commit: (held) => {
      forget();
      return session.commit(held);
    },
    rollback: (cause) => {
      forget();
      return session.rollback(cause);
    },
    abandon: (settled) => {
      forget();
      session.abandon(settled);
    },
  };
  open.set(tx, driven);
  return driven;
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
