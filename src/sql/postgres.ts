/**
 * The Postgres adapters: node-postgres (`pg`) and postgres.js (`postgres`), each driven through
 * the few methods the ledger calls, typed structurally so neither package is imported.
 *
 * @module
 */
import { createHash } from 'node:crypto';
import { ConfigurationError } from '../core/errors/base.js';
import { connectionLost, rolledBack, settle, type SqlClient, type SqlResult, type SqlSession } from './driver.js';
import { LEDGER_TX } from './statements.js';

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

// One name per statement text: the table's name is in the text, so two ledgers never share one.
const statementNames = new Map<string, string>();
function statementName(text: string): string {
  let name = statementNames.get(text);
  if (name === undefined) statementNames.set(text, (name = `myr_gateway_${createHash('sha256').update(text).digest('hex').slice(0, 24)}`));
  return name;
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

const isRow = (row: unknown): row is Record<string, unknown> => typeof row === 'object' && row !== null;

const rows = (value: unknown): readonly Record<string, unknown>[] => (Array.isArray(value) ? value.filter(isRow) : []);

/**
 * The ledger over a node-postgres `Pool`: each run checks a client out, and the handler's `tx` is
 * that `PoolClient`, inside BEGIN … COMMIT.
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
  if (typeof pool !== 'object' || pool === null || typeof pool.connect !== 'function' || 'unsafe' in pool || 'connectionParameters' in pool) {
    throw new ConfigurationError('fromPg takes a node-postgres Pool (new pg.Pool(…)), not a single pg.Client; for postgres.js use fromPostgresJs', 'pool');
  }
  const prepare = preparing(options);
  return {
    dialect: 'postgres',
    commitChecked: true,
    async begin(lockTimeoutMs) {
      const client = (await pool.connect()) as PgClientOf<P> & PgClientLike;
      const session = pgSession(client, prepare);
      try {
        // One round trip (simple protocol, two statements); the value is a checked integer.
        await client.query(`BEGIN; SET LOCAL lock_timeout = ${lockTimeoutMs}`);
      } catch (error) {
        session.abandon(Promise.resolve());
        throw error;
      }
      return session;
    },
  };
}

/**
 * While the ledger holds a checked-out client, its connection dying (the database restarting)
 * must not be an uncaught 'error' event (node-postgres removes the pool's listener at checkout):
 * the statement in flight rejects with the same error, which the ledger answers.
 */
function listenForErrors(client: object): () => void {
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

function preparing(options: PgLedgerOptions): boolean {
  if (typeof options !== 'object' || options === null || (options.prepare !== undefined && typeof options.prepare !== 'boolean')) {
    throw new ConfigurationError('prepare must be true or false', 'prepare');
  }
  return options.prepare ?? true;
}

function pgSession<C extends PgClientLike>(client: C, prepare: boolean): SqlSession<C> {
  let open = true;
  const stopListening = listenForErrors(client);
  const end = (destroy?: Error) => {
    if (!open) return;
    open = false;
    // A destroyed client keeps the listener: its socket may still report the closing.
    if (!destroy) stopListening();
    client.release(destroy);
  };
  return {
    tx: client,
    async query(text, values): Promise<SqlResult> {
      // Only statements with parameters: the run's, never the schema's DDL.
      const result = await (prepare && values.length > 0 ? client.query({ name: statementName(text), text, values: [...values] }) : client.query(text, [...values]));
      return { rows: rows(result.rows), affected: result.rowCount ?? 0 };
    },
    async commit() {
      // COMMIT with no transaction open (the work ended it on tx, taking the claim along) is only
      // a warning, no_active_sql_transaction (25P01): the claim may not have been committed.
      let noTransaction = false;
      const stopNotices = listen(client, 'notice', (notice: unknown) => {
        if (typeof notice === 'object' && notice !== null && 'code' in notice && notice.code === '25P01') noTransaction = true;
      });
      let result;
      try {
        result = await client.query('COMMIT');
      } catch (error) {
        end(toError(error));
        throw error;
      } finally {
        stopNotices();
      }
      end();
      // Postgres answers COMMIT of a failed transaction with ROLLBACK, not an error.
      if (result.command !== 'COMMIT') throw rolledBack(result.command);
      if (noTransaction) throw rolledBack('no transaction in progress');
    },
    async rollback() {
      try {
        await client.query('ROLLBACK');
        end();
      } catch (error) {
        end(toError(error));
      }
    },
    abandon() {
      // Closing the connection makes the server roll the transaction back at once, and frees its locks.
      end(new Error('myr-gateway: the work outlived its time; its transaction is rolled back'));
    },
  };
}

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
const connectionClosed = () => Object.assign(new Error('myr-gateway: the database closed the ledger\'s connection (nothing more was sent on it)'), { code: 'CONNECTION_CLOSED' });

/**
 * Calls `closed` when postgres.js sees the reserved connection close while the run holds it: the
 * server ended the session (an admin, a failover, `idle_in_transaction_session_timeout`) while
 * the work was busy elsewhere, and no statement of the ledger's was there to fail. A reserved
 * connection says nothing of it in postgres.js's public API; its `onexecute` statement option
 * (what its own `sql.begin` watches a connection with) hands over the connection, whose
 * `onclose` postgres.js calls once on closing. Where a version does neither, the loss is
 * learnt, as before, from the next statement that fails.
 */
function watchClose(closed: () => void): { readonly options: PostgresJsQueryOptions; stop(): void } {
  let connection: object | undefined;
  let previous: unknown;
  const listener = (error: unknown) => {
    closed();
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
      if (connection !== undefined && Reflect.get(connection, 'onclose') === listener) Reflect.set(connection, 'onclose', previous);
    },
  };
}

function countOf(result: unknown): number {
  if (typeof result === 'object' && result !== null && 'count' in result && typeof result.count === 'number') return result.count;
  return 0;
}

/**
 * The ledger over postgres.js: each run reserves one connection, and the handler's `tx` is that
 * reserved `sql` inside BEGIN … COMMIT (use it as a tagged template: ``await tx`UPDATE …` ``).
 *
 * @example
 * ```ts
 * import postgres from 'postgres';
 * const ledger = new SqlLedger(fromPostgresJs(postgres(process.env.DATABASE_URL)));
 * // onEvent: async (event, { tx }) => { await tx`UPDATE orders SET paid = true WHERE id = ${event.signed.reference_id}`; }
 * ```
 */
export function fromPostgresJs<S extends PostgresJsLike>(sql: S, options: PgLedgerOptions = {}): SqlClient<PostgresJsTxOf<S>> {
  if ((typeof sql !== 'function' && typeof sql !== 'object') || sql === null || typeof sql.reserve !== 'function') {
    throw new ConfigurationError('fromPostgresJs takes a postgres.js instance (postgres(url), version 3.4 or later)', 'sql');
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
      const send = (text: string, params: readonly unknown[] = [], options: PostgresJsQueryOptions = prepare && params.length > 0 ? { prepare: true } : {}) =>
        lost ? Promise.reject(connectionClosed()) : Promise.resolve(reserved.unsafe(text, params as never[], options)).catch(noticeLoss);
      // One simple query: BEGIN, the run's lock_timeout, and a mark of this transaction, so that
      // COMMIT can tell it is still the one open. Not awaited here: postgres.js pipelines, so the
      // claim leaves right behind it, in the same round trip. Nothing is lost by it: the claim runs
      // in the transaction BEGIN opened (on the same connection, in order), or fails (its guarded
      // form, `claimBeforeBegun`, fails outside that transaction).
      const begun = send(`BEGIN; SET LOCAL lock_timeout = ${lockTimeoutMs}; SET LOCAL ${LEDGER_TX} = 'on'`, [], closes.options);
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
        if (connectionLost(cause)) lost = true;
        if (!lost) await settle(send('ROLLBACK'));
        end();
      };
      return {
        tx: reserved,
        async query(text, params) {
          const [, result] = await Promise.all([begun, send(text, params)]);
          return { rows: rows(result), affected: countOf(result) };
        },
        async commit() {
          let result;
          try {
            await begun;
            // The check and COMMIT in one simple query: whether the ledger's transaction is still
            // the one open. Work that ended it on tx (a ROLLBACK) took the claim along; COMMIT is
            // then a no-op warning this client does not surface, and the check, run outside that
            // transaction, no longer sees its SET LOCAL mark. The answer carries the check's row
            // and COMMIT's command tag; in a transaction a failed statement aborted, the check
            // itself fails (25P02) and COMMIT does not run.
            result = await send(`SELECT current_setting('${LEDGER_TX}', true) = 'on' AS held; COMMIT`);
          } catch (error) {
            // An aborted transaction fails the check and skips COMMIT: it is still open. A COMMIT
            // that failed has ended it already; the ROLLBACK is then a warning.
            await rollback(error);
            throw error;
          }
          end();
          const command = typeof result === 'object' && result !== null && 'command' in result ? result.command : undefined;
          if (typeof command === 'string' && command !== 'COMMIT') throw rolledBack(command);
          if (rows(result)[0]?.held !== true) throw rolledBack('no transaction in progress');
        },
        rollback,
        abandon(settled) {
          // postgres.js cannot close one reserved connection: the connection stays out of the pool
          // until the work settles, then rolls back. It never commits.
          void settled.then(rollback);
        },
      };
    },
  };
}
