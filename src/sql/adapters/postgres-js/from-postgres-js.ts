/**
 * The postgres.js (`postgres`) adapter, driven through the few methods the ledger calls and typed
 * structurally so the package is never imported: a reserved connection per run, the claim
 * pipelined behind BEGIN, and a connection postgres.js has seen close never written to again.
 *
 * @module
 */
import { ConfigurationError } from '../../../core/errors/base.js';
import { within } from '../../../core/wait.js';
import { connectionLost } from '../../database-errors.js';
import { beginRun, CHECK_THEN_COMMIT, transactionNotOpen } from '../../dialects/postgres/session.js';
import { rolledBack, settle, usedAfterRun, type SqlClient } from '../../sql-client.js';
import { preparing, rowsOf } from '../adapter-options.js';
import { guardedTx } from './postgres-js-tx.js';
import type { PgLedgerOptions } from '../pg/from-pg.js';

/** A postgres.js `sql` instance (`postgres(url)`), as the ledger drives it. */
export interface PostgresJsLike {
  /** Reserves one connection of the pool (postgres.js 3.4+). */
  reserve(): Promise<PostgresJsReservedLike>;
}

/** A reserved postgres.js connection (`await sql.reserve()`). */
export interface PostgresJsReservedLike {
  /** Sends one statement with its parameters. */
  unsafe(
    text: string,
    params?: never[],
    options?: {
      /** Prepare it once per connection (postgres.js's own `prepare: false` still wins). */
      prepare?: boolean;
    },
  ): PromiseLike<unknown> & {
    /** The command tag of the statement. */
    readonly command?: string;
  };
  /** Gives the connection back. */
  release(): void;
}

/** The reserved connection type of a postgres.js instance. */
export type PostgresJsTxOf<S> = S extends {
  /** postgres.js's `reserve()`. */
  reserve(): Promise<infer R>;
}
  ? R
  : never;

/** The options the adapter gives one postgres.js statement. */
interface PostgresJsQueryOptions {
  prepare?: boolean;
  onexecute?: (connection: unknown) => boolean;
}

/** The error of a statement the adapter did not send: postgres.js had seen the connection close. */
const connectionClosed = () =>
  Object.assign(new Error("myr-gateway: the database closed the ledger's connection (nothing more was sent on it)"), {
    code: 'CONNECTION_CLOSED',
  });

/**
 * Calls `closed` when postgres.js sees the reserved connection close while the run holds it: the
 * server ended the session (an admin, a failover, `idle_in_transaction_session_timeout`) while
 * the work was busy elsewhere, and no statement of the ledger's was there to fail. A reserved
 * connection says nothing of it in postgres.js's public API; its `onexecute` statement option
 * (what its own `sql.begin` watches a connection with) hands over the connection, whose
 * `onclose` postgres.js calls once on closing. Where a version does neither, the loss is
 * learnt, as before, from the next statement that fails.
 */
function watchClose(closed: () => void): CloseWatch {
  let connection: object | undefined;
  let previous: unknown;
  let seen!: () => void;
  const closing = new Promise<void>((resolve) => (seen = resolve));
  const listener = (error: unknown) => {
    closed();
    seen();
    if (typeof previous === 'function') Reflect.apply(previous, undefined, [error]);
  };
  return {
    options: {
      onexecute(c) {
        if (connection === undefined && typeof c === 'object' && c !== null) {
          connection = c;
          previous = Reflect.get(c, 'onclose');
          Reflect.set(c, 'onclose', listener);
        }
        return true;
      },
    },
    stop() {
      if (connection !== undefined && Reflect.get(connection, 'onclose') === listener)
        Reflect.set(connection, 'onclose', previous);
    },
    watching: () => connection !== undefined,
    closesWithin: (ms) => within(closing, { ms, onTimeout: () => undefined }),
  };
}

/** What {@link watchClose} answers. */
interface CloseWatch {
  /** The options of the statement that hands the connection over (the run's first). */
  readonly options: PostgresJsQueryOptions;
  /** Puts the connection's own close handler back: the run gave the connection back. */
  stop(): void;
  /** Whether the connection was handed over, so that its close is reported. */
  watching(): boolean;
  /** Settles when the connection closes, or after `ms`. */
  closesWithin(ms: number): Promise<void>;
}

/**
 * How long a rollback waits for postgres.js to report the close when what made the run roll back
 * looks like a lost connection: the server closes a session right after its FATAL, so a real loss
 * is reported within milliseconds; an error from elsewhere in the work (a file, an HTTP call: a
 * Node system error also has a `syscall`) is not one, and the transaction is rolled back after it.
 */
const LOSS_REPORTED_WITHIN_MS = 100;

function countOf(result: unknown): number {
  if (typeof result === 'object' && result !== null && 'count' in result && typeof result.count === 'number')
    return result.count;
  return 0;
}

/**
 * The ledger over postgres.js: each run reserves one connection, and the handler's `tx` is that
 * reserved `sql` inside BEGIN … COMMIT (use it as a tagged template: ``await tx`UPDATE …` ``).
 * `tx` refuses a query (it rejects, nothing is sent) once postgres.js has seen the connection
 * close, or once the run has ended: keep it inside the handler.
 *
 * @example
 * ```ts
 * import postgres from 'postgres';
 * const ledger = new SqlLedger(fromPostgresJs(postgres(process.env.DATABASE_URL)));
 * // onEvent: async (event, { tx }) => { await tx`UPDATE orders SET paid = true WHERE id = ${event.signed.reference_id}`; }
 * ```
 */
export function fromPostgresJs<S extends PostgresJsLike>(
  sql: S,
  options: PgLedgerOptions = {},
): SqlClient<PostgresJsTxOf<S>> {
  if ((typeof sql !== 'function' && typeof sql !== 'object') || sql === null || typeof sql.reserve !== 'function') {
    throw new ConfigurationError(
      'fromPostgresJs takes a postgres.js instance (postgres(url), version 3.4 or later)',
      'sql',
    );
  }
  const prepare = preparing(options);
  return {
    dialect: 'postgres',
    commitChecked: true,
    claimBeforeBegun: true,
    async begin(lockTimeoutMs) {
      const reserved = (await sql.reserve()) as PostgresJsTxOf<S> & PostgresJsReservedLike;
      // postgres.js has taken a connection that died back into its pool by itself: a statement
      // sent on it afterwards never settles, or throws outside any promise (postgres.js 3.4.9
      // writes to the closed socket from a setImmediate: an uncaught TypeError that ends the
      // process), and giving it back would hand the dead connection to the next caller. Once it
      // is lost, nothing more is sent on it, and it is not given back.
      let lost = false;
      const noticeLoss = (error: unknown) => {
        if (connectionLost(error)) lost = true;
        throw error;
      };
      const closes = watchClose(() => (lost = true));
      // Only statements with parameters are prepared: the run's, never BEGIN or the schema's DDL.
      const send = (
        text: string,
        params: readonly unknown[] = [],
        options: PostgresJsQueryOptions = prepare && params.length > 0 ? { prepare: true } : {},
      ) =>
        lost
          ? Promise.reject(connectionClosed())
          : Promise.resolve(reserved.unsafe(text, params as never[], options)).catch(noticeLoss);
      // One simple query: BEGIN, the run's lock_timeout, and a mark of this transaction, so that
      // COMMIT can tell it is still the one open. Not awaited here: postgres.js pipelines, so the
      // claim leaves right behind it, in the same round trip. Nothing is lost by it: the claim runs
      // in the transaction BEGIN opened (on the same connection, in order), or fails (its guarded
      // form, `claimBeforeBegun`, fails outside that transaction).
      const begun = send(beginRun(lockTimeoutMs), [], closes.options);
      // Answered by the first statement after it, or by the rollback: never an unhandled rejection.
      void settle(begun);
      let open = true;
      const end = () => {
        if (!open) return;
        open = false;
        closes.stop();
        if (!lost) reserved.release();
      };
      const rollback = async (cause?: unknown) => {
        // What the work threw may come from anywhere; only a connection postgres.js cannot report
        // on is taken as lost from it.
        if (!lost && connectionLost(cause)) {
          if (closes.watching()) await closes.closesWithin(LOSS_REPORTED_WITHIN_MS);
          else lost = true;
        }
        if (!lost) await settle(send('ROLLBACK'));
        end();
      };
      // Set when the run gave up on the work (timed out): its tx refuses from then on.
      let over = false;
      const work = guardedTx(reserved, () => (lost ? connectionClosed() : open && !over ? undefined : usedAfterRun()));
      return {
        tx: work.tx,
        async query(text, params) {
          const [, result] = await Promise.all([begun, send(text, params)]);
          return { rows: rowsOf(result), affected: countOf(result) };
        },
        async commit() {
          let result;
          // The check and COMMIT in one simple query (CHECK_THEN_COMMIT says why), unless the
          // work cannot have ended the transaction: it sent only plain statements through tx
          // (or none), and a close of the connection (after which postgres.js would reconnect
          // and COMMIT nothing, answering COMMIT all the same) is reported to the run.
          const checked = !closes.watching() || work.mayHaveEnded();
          try {
            await begun;
            result = await send(checked ? CHECK_THEN_COMMIT : 'COMMIT');
          } catch (error) {
            // The check failed and COMMIT was not sent, or a COMMIT that failed has ended the
            // transaction already (the ROLLBACK is then a warning).
            await rollback(error);
            if (transactionNotOpen(error)) throw rolledBack('no transaction in progress');
            throw error;
          }
          end();
          const command =
            typeof result === 'object' && result !== null && 'command' in result ? result.command : undefined;
          if (typeof command === 'string' && command !== 'COMMIT') throw rolledBack(command);
          if (checked && rowsOf(result)[0]?.held !== true) throw rolledBack('no transaction in progress');
        },
        rollback,
        abandon(settled) {
          // Rolled back now, not once the work settles: a handler stuck on a lock this transaction
          // holds (a write through the app's own sql instead of tx) would otherwise hold both
          // connections for ever. tx refuses what the work sends from now on. What the work threw,
          // when it already has (a lost connection: nothing more is sent on it), is read first.
          over = true;
          void within(settled, { ms: 0, onTimeout: () => undefined }).then(rollback);
        },
      };
    },
  };
}
