/**
 * The node-postgres (`pg`) adapter, driven through the few methods the ledger calls and typed
 * structurally so the package is never imported; and what the Postgres adapters share (the
 * `prepare` option, rows read from an answer). postgres.js is `from-postgres-js.ts`.
 *
 * @module
 */
import { ConfigurationError } from '../../../core/errors/base.js';
import { aborted } from '../../database-errors.js';
import {
  beginRun,
  CHECK_THEN_COMMIT,
  preparedStatementGone,
  transactionNotOpen,
} from '../../dialects/postgres/session.js';
import { rolledBack, usedAfterRun, type SqlClient, type SqlResult, type SqlSession } from '../../sql-client.js';
import { preparing, rowsOf } from '../adapter-options.js';
import { openInOneRoundTrip, takesPipeline } from './begin-in-one-round-trip.js';
import { guardedTx, usedBeforeClaim } from './pg-tx.js';
import { statementName } from './statement-names.js';

/** A node-postgres client checked out of a pool (`pg.PoolClient`), as the ledger drives it. */
export interface PgClientLike {
  /**
   * Sends one statement; `values` are its `$1…` parameters. Given `{ name, text, values }`, the
   * statement is prepared once per connection under `name` and then only executed.
   */
  query(
    text: string | PgNamedQuery,
    values?: unknown[],
  ): Promise<{
    /** The rows of a SELECT or RETURNING. */
    rows: unknown[];
    /** Rows inserted, updated or deleted. */
    rowCount: number | null;
    /** The command tag (`COMMIT`, or `ROLLBACK` for a COMMIT of a failed transaction). */
    command: string;
  }>;
  /** Gives the client back to its pool; with an error, destroys it instead. */
  release(destroy?: Error | boolean): void;
}

/** A statement node-postgres prepares once per connection (its `QueryConfig` with a `name`). */
export interface PgNamedQuery {
  /** The prepared statement's name on the connection. */
  name: string;
  /** The statement. */
  text: string;
  /** Its `$1…` parameters. */
  values: unknown[];
}

/** Options of {@link fromPg} and {@link fromPostgresJs}. */
export interface PgLedgerOptions {
  /**
   * Whether the ledger's own statements are prepared once per connection (named prepared
   * statements) instead of parsed and planned at each callback: the claim's planning is most of
   * the ledger's cost over a bare insert. Turn it off behind a pooler that cannot keep named
   * statements across transactions (PgBouncer before 1.21, or without `max_prepared_statements`,
   * in transaction mode). postgres.js: its own `prepare` option is the default.
   *
   * @default true
   * @example
   * ```ts
   * fromPg(pool, { prepare: false }); // PgBouncer 1.20, transaction pooling
   * ```
   */
  prepare?: boolean | undefined;
}

/** A node-postgres `Pool` (or anything with its promise `connect()`). */
export interface PgPoolLike {
  /** Checks a client out. */
  connect(): Promise<PgClientLike>;
}

/**
 * The client a pool hands out. node-postgres declares `connect()` twice (promise, then callback),
 * and TypeScript infers from the last declaration: the callback's client is read first; a pool
 * with only the promise form (nothing inferred from a callback) gives its promise's client.
 */
export type PgClientOf<P> = P extends {
  /** node-postgres's callback form of `connect`. */
  connect(callback: (error: never, client: infer C, ...rest: never[]) => void): void;
}
  ? unknown extends C
    ? PgPromisedClient<P>
    : Extract<NonNullable<C>, PgClientLike>
  : PgPromisedClient<P>;

/** The client of a pool's promise `connect()`. */
export type PgPromisedClient<P> = P extends {
  /** The promise form of `connect`. */
  connect(): Promise<infer C>;
}
  ? C
  : never;

/**
 * The ledger over a node-postgres `Pool`: each run checks a client out, and the handler's `tx` is
 * that `PoolClient`, inside BEGIN … COMMIT. `tx` is a Proxy of it (same type, not the same
 * object): its `query` is refused once the run has ended, and its `release()` does nothing (the
 * ledger gives the client back). A log (`console.log`, `JSON.stringify`) shows it as
 * `PgTx { processID }`, never the client's connection parameters and password.
 *
 * @example
 * ```ts
 * import pg from 'pg';
 * const ledger = new SqlLedger(fromPg(new pg.Pool({ connectionString: process.env.DATABASE_URL })));
 * // onEvent: async (event, { tx }) => { await tx.query('UPDATE orders SET paid = true WHERE id = $1', [event.signed.reference_id]); }
 * ```
 */
export function fromPg<P extends PgPoolLike>(pool: P, options: PgLedgerOptions = {}): SqlClient<PgClientOf<P>> {
  // A pg.Client (it has connectionParameters) has connect() too, but it hands out no client.
  if (
    typeof pool !== 'object' ||
    pool === null ||
    typeof pool.connect !== 'function' ||
    'unsafe' in pool ||
    'connectionParameters' in pool
  ) {
    throw new ConfigurationError(
      'fromPg takes a node-postgres Pool (new pg.Pool(…)), not a single pg.Client; for postgres.js use fromPostgresJs',
      'pool',
    );
  }
  const prepare = preparing(options);
  return {
    dialect: 'postgres',
    commitChecked: true,
    async begin(lockTimeoutMs, ledgerRun = false) {
      const { client, stopListening } = await checkOut<PgClientOf<P> & PgClientLike>(pool);
      // A ledger run's first act is its claim: BEGIN leaves with it, in its round trip. A client
      // that cannot take the pipeline (see takesPipeline) opens as any other.
      if (ledgerRun && takesPipeline(client)) return pgSession(client, prepare, stopListening, lockTimeoutMs);
      const session = pgSession(client, prepare, stopListening, undefined);
      try {
        // One round trip (simple protocol): BEGIN, the run's lock_timeout (a checked integer), and
        // the mark of this transaction COMMIT's check reads.
        await client.query(beginRun(lockTimeoutMs));
      } catch (error) {
        session.abandon(Promise.resolve());
        throw error;
      }
      return session;
    },
  };
}

/**
 * While the ledger holds a checked-out client (its own, or Drizzle's), its connection dying (the
 * database restarting, a terminated session) must not be an uncaught 'error' event: node-postgres
 * removes the pool's listener at checkout, and Drizzle adds none. The statement in flight rejects
 * with the same error, which the ledger answers. Answers how to stop listening.
 */
export function listenForErrors(client: object): () => void {
  return listen(client, 'error', () => undefined);
}

/** Listens for `event` on a client that is an EventEmitter (node-postgres's is); answers how to stop. */
function listen(client: object, event: string, listener: (value: unknown) => void): () => void {
  const on: unknown = Reflect.get(client, 'on');
  const off: unknown = Reflect.get(client, 'removeListener');
  if (typeof on !== 'function' || typeof off !== 'function') return () => undefined;
  Reflect.apply(on, client, [event, listener]);
  return () => void Reflect.apply(off, client, [event, listener]);
}

function toError(error: unknown): Error {
  return error instanceof Error ? error : new Error(String(error));
}

/**
 * Checks a client out, listening for its `'error'` event from the moment the pool hands it over.
 * pg-pool calls a `connect` callback synchronously, as the client becomes ready; its promise
 * resumes the caller a microtask later, after the rest of that network read, and a FATAL that came
 * in it (a session terminated as it was handed out) was emitted with nobody listening: an uncaught
 * exception that ends the process. A pool with only the promise form is heard when it resolves.
 */
function checkOut<C extends PgClientLike>(
  pool: PgPoolLike,
): Promise<{ readonly client: C; readonly stopListening: () => void }> {
  return new Promise((resolve, reject) => {
    let answered = false;
    const handOver = (client: C) => {
      if (answered) return;
      answered = true;
      resolve({ client, stopListening: listenForErrors(client) });
    };
    const fail = (error: unknown) => {
      if (answered) return;
      answered = true;
      reject(error instanceof Error ? error : new Error(String(error)));
    };
    const connect: unknown = Reflect.get(pool, 'connect');
    if (typeof connect !== 'function') return fail(new TypeError('the pool has no connect()'));
    const called: unknown = Reflect.apply(connect, pool, [
      (error: unknown, client: C) => (error ? fail(error) : handOver(client)),
    ]);
    const then: unknown = typeof called === 'object' && called !== null ? Reflect.get(called, 'then') : undefined;
    if (typeof then === 'function') Reflect.apply(then, called, [(client: C) => handOver(client), fail]);
  });
}

/**
 * The session of a checked-out client. `opening`: BEGIN is not sent yet; it leaves with the first
 * statement (a ledger run's claim), in one round trip, with this lock bound. Until then nothing
 * is open: COMMIT and ROLLBACK have nothing to end, and `tx` is refused.
 */
function pgSession<C extends PgClientLike>(
  client: C,
  prepare: boolean,
  stopListening: () => void,
  opening: number | undefined,
): SqlSession<C> {
  let open = true;
  let unopened = opening;
  // Set once the connection answered that a statement prepared on it is gone (DEALLOCATE ALL ran
  // on it): node-postgres would go on binding the ones it prepared, so the rest of the run sends
  // its statements unnamed, and the connection is not given back.
  let lostStatements: Error | undefined;
  const end = (destroy: Error | undefined = lostStatements) => {
    if (!open) return;
    open = false;
    // A destroyed client keeps the listener: its socket may still report the closing.
    if (!destroy) stopListening();
    client.release(destroy);
  };
  const noticeLostStatements = (error: unknown) => {
    if (preparedStatementGone(error))
      lostStatements = new Error('myr-gateway: the connection lost its prepared statements (DEALLOCATE ALL)');
  };
  const work = guardedTx(client, () =>
    !open ? usedAfterRun() : unopened === undefined ? undefined : usedBeforeClaim(),
  );
  const rollback = async () => {
    if (unopened !== undefined) return end();
    try {
      await client.query('ROLLBACK');
      end();
    } catch (error) {
      end(toError(error));
    }
  };
  return {
    tx: work.tx,
    async query(text, values): Promise<SqlResult> {
      if (unopened !== undefined) {
        const lockTimeoutMs = unopened;
        unopened = undefined;
        // Only a statement with parameters goes in the pipeline (one statement per Parse); the
        // schema's DDL, without any, may hold several.
        if (values.length > 0)
          return openInOneRoundTrip(client, lockTimeoutMs, { text, values }, prepare, noticeLostStatements);
        await client.query(beginRun(lockTimeoutMs));
      }
      // Only statements with parameters: the run's, never the schema's DDL.
      const result = await (
        prepare && values.length > 0 && lostStatements === undefined
          ? client.query({ name: statementName(text), text, values: [...values] })
          : client.query(text, [...values])
      ).catch((error: unknown) => {
        noticeLostStatements(error);
        throw error;
      });
      return { rows: rowsOf(result.rows), affected: result.rowCount ?? 0 };
    },
    async commit() {
      // Nothing was sent: nothing to commit.
      if (unopened !== undefined) return end();
      // Several statements in one simple query answer one result each: COMMIT's is the last.
      let answer: unknown;
      try {
        // The check only when the work may have ended the transaction (see pg-tx.ts).
        answer = await client.query(work.mayHaveEnded() ? CHECK_THEN_COMMIT : 'COMMIT');
      } catch (error) {
        // The check failed (the ledger's transaction had ended, or a statement of the work had
        // failed), and COMMIT was not sent: roll back whatever transaction is open.
        if (transactionNotOpen(error) || aborted(error)) {
          await rollback();
          throw transactionNotOpen(error) ? rolledBack('no transaction in progress') : error;
        }
        end(toError(error));
        throw error;
      }
      end();
      const last: unknown = Array.isArray(answer) ? answer.at(-1) : answer;
      const command = typeof last === 'object' && last !== null && 'command' in last ? last.command : undefined;
      // Postgres answers COMMIT of a failed transaction with ROLLBACK, not an error.
      if (command !== 'COMMIT') throw rolledBack(String(command));
    },
    rollback,
    abandon() {
      // Closing the connection makes the server roll the transaction back at once, and frees its locks.
      end(new Error('myr-gateway: the work outlived its time; its transaction is rolled back'));
    },
  };
}
