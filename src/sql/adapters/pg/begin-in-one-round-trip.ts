/**
 * How a node-postgres run opens in one round trip: BEGIN, the run's lock bound and the ledger's
 * mark ({@link BOUND_AND_MARKED}), and the run's first statement (its claim), written as one
 * extended-protocol pipeline under a single Sync. node-postgres sends one query at a time, each
 * with a Sync of its own, so BEGIN and the claim otherwise cost two round trips. Under one Sync,
 * a statement that fails makes the server skip the rest: a claim never runs without its BEGIN.
 *
 * It is a node-postgres "submittable" (the documented way `pg-cursor` sends its own messages):
 * `client.query(submittable)` hands it the connection when the client's turn comes, and then
 * the answers to what it wrote. Typed structurally, so the package is never imported.
 *
 * @module
 */
import { BOUND_AND_MARKED, preparedStatementGone } from '../../dialects/postgres/session.js';
import type { SqlResult } from '../../sql-client.js';
import type { PgClientLike } from './from-pg.js';
import { openingName } from './statement-names.js';

/** The connection's message writers a submittable uses (node-postgres's `Connection`). */
export interface PgConnectionLike {
  parse(query: { readonly name: string; readonly text: string; readonly types: readonly number[] }): void;
  bind(config: { readonly statement: string; readonly values: readonly (string | Buffer | null)[] }): void;
  describe(message: { readonly type: 'P'; readonly name: string }): void;
  execute(config: { readonly portal: string; readonly rows: number }): void;
  close(message: { readonly type: 'S'; readonly name: string }): void;
  sync(): void;
  sendCopyFail?(message: string): void;
  readonly stream?: { cork?(): void; uncork?(): void };
}

/** A column of node-postgres's RowDescription. */
interface Field {
  readonly name: string;
  readonly dataTypeID: number;
}

/** Reads a column's text into the value node-postgres would give (its client's type parsers). */
export type TypeParserOf = (dataTypeID: number) => (text: string) => unknown;

/** One statement of the pipeline; `name` is empty for one parsed at each use (`prepare: false`). */
interface Step {
  readonly name: string;
  readonly text: string;
  readonly values: readonly (string | Buffer | null)[];
}

/** The names of statements this submittable's kind has prepared on each connection (none of node-postgres's own). */
const prepared = new WeakMap<object, Set<string>>();

/**
 * A parameter as the wire takes it, checked before anything is written (a value that cannot be
 * written must not leave half a pipeline on the connection): text, bytes or NULL.
 */
function wireValue(value: unknown): string | Buffer | null {
  if (value === null || value === undefined) return null;
  if (typeof value === 'string' || Buffer.isBuffer(value)) return value;
  if (typeof value === 'number' || typeof value === 'bigint' || typeof value === 'boolean') return String(value);
  throw new TypeError(`the ledger sends text, numbers and bytes only (got ${typeof value})`);
}

/** The row count of a command tag (`INSERT 0 1`, `UPDATE 2`, `SELECT 1`), as node-postgres reads it. */
function countOf(tag: unknown): number {
  const match = /^[A-Za-z]+(?: (\d+))?(?: (\d+))?/.exec(String(tag));
  return Number(match?.[2] ?? match?.[1] ?? 0);
}

/**
 * BEGIN, the run's bounds and `text` with `values`, in one round trip on the client it is given
 * to: resolves with the answer of `text`, or rejects with the first error (the statements after
 * it were skipped; the transaction is aborted, or was never opened: ROLLBACK ends either).
 * `nameOf`: the name the bounds and `text` are each prepared under, once per connection
 * (undefined: parsed at each use, `prepare: false`); `parserOf`: the client's column parsers.
 *
 * @example
 * ```ts
 * const opening = new BeginInOneRoundTrip(5000, { text, values }, openingName, parserOf);
 * client.query(opening);
 * const { affected } = await opening.answer;
 * ```
 */
export class BeginInOneRoundTrip {
  /** The answer of the run's first statement. */
  readonly answer: Promise<SqlResult>;
  readonly #steps: readonly Step[];
  readonly #parserOf: TypeParserOf;
  #resolve!: (result: SqlResult) => void;
  #reject!: (error: unknown) => void;
  /** The names prepared on the connection this was submitted on (its entry of `prepared`). */
  #known: Set<string> | undefined;
  #completed = 0;
  #columns: readonly { readonly name: string; readonly parse: (text: string) => unknown }[] = [];
  readonly #rows: Record<string, unknown>[] = [];
  #affected = 0;
  #settled = false;
  /**
   * Set by node-postgres when its `query_timeout` applies: its read-timeout timer is cleared only
   * through a query's callback, so it is called once, with the outcome (otherwise the timer of
   * every run would live on for `query_timeout`, holding the client).
   */
  callback: ((error: unknown) => void) | undefined;

  constructor(
    lockTimeoutMs: number,
    first: { readonly text: string; readonly values: readonly unknown[] },
    nameOf: ((text: string) => string) | undefined,
    parserOf: TypeParserOf,
  ) {
    const step = (text: string, values: readonly unknown[]): Step => ({
      name: nameOf === undefined ? '' : nameOf(text),
      text,
      values: values.map(wireValue),
    });
    this.#steps = [
      { name: '', text: 'BEGIN', values: [] },
      step(BOUND_AND_MARKED, [lockTimeoutMs]),
      step(first.text, first.values),
    ];
    this.#parserOf = parserOf;
    this.answer = new Promise((resolve, reject) => {
      this.#resolve = resolve;
      this.#reject = reject;
    });
  }

  /** node-postgres gives the connection when the client's turn comes: the pipeline is written at once. */
  submit(connection: PgConnectionLike): null {
    let known = prepared.get(connection);
    if (known === undefined) prepared.set(connection, (known = new Set()));
    this.#known = known;
    const last = this.#steps.length - 1;
    connection.stream?.cork?.();
    try {
      this.#steps.forEach(({ name, text, values }, index) => {
        if (name === '' || !known.has(name)) {
          // Closing a statement the connection does not have is no error: a Parse whose answer a
          // failed pipeline hid may or may not have happened.
          if (name !== '') connection.close({ type: 'S', name });
          connection.parse({ name, text, types: [] });
        }
        connection.bind({ statement: name, values });
        if (index === last) connection.describe({ type: 'P', name: '' });
        connection.execute({ portal: '', rows: 0 });
      });
      connection.sync();
    } finally {
      connection.stream?.uncork?.();
    }
    return null;
  }

  handleRowDescription(message: { readonly fields: readonly Field[] }): void {
    this.#columns = message.fields.map(({ name, dataTypeID }) => ({ name, parse: this.#parserOf(dataTypeID) }));
  }

  handleDataRow(message: { readonly fields: readonly (string | null)[] }): void {
    // Only the last statement's rows are the answer (the bounds' SELECT answers a row too).
    if (this.#completed !== this.#steps.length - 1) return;
    const row: Record<string, unknown> = {};
    this.#columns.forEach(({ name, parse }, index) => {
      const text = message.fields[index];
      row[name] = text === null || text === undefined ? null : parse(text);
    });
    this.#rows.push(row);
  }

  handleCommandComplete(message: { readonly text?: unknown }): void {
    this.#completed += 1;
    if (this.#completed === this.#steps.length) this.#affected = countOf(message.text);
  }

  handleEmptyQuery(): void {
    this.#completed += 1;
  }

  /** Rows are asked for all at once: a portal is never suspended. */
  handlePortalSuspended(): void {}

  /** None of these statements copies: a COPY is refused, so the connection is not left waiting. */
  handleCopyInResponse(connection: PgConnectionLike): void {
    connection.sendCopyFail?.('myr-gateway: the ledger sends no COPY');
  }

  handleCopyData(): void {}

  /**
   * The pipeline failed: the server's first error (it skips the rest, up to the Sync), the socket's,
   * or node-postgres's `query_timeout` (the answers may still come after it: they change nothing).
   */
  handleError(error: unknown): void {
    if (this.#settled) return;
    this.#settled = true;
    // Its statements must be parsed again on this connection.
    if (preparedStatementGone(error)) this.#known?.clear();
    this.#reject(error);
    this.callback?.(error);
  }

  handleReadyForQuery(): void {
    if (this.#settled) return;
    this.#settled = true;
    for (const { name } of this.#steps) if (name !== '') this.#known?.add(name);
    this.#resolve({ rows: this.#rows, affected: this.#affected });
    this.callback?.(null);
  }
}

/** The client's own parser of a column type's text (its `types`), or the text itself for a client without one. */
function typeParserOf(client: object, dataTypeID: number): (text: string) => unknown {
  const getTypeParser: unknown = Reflect.get(client, 'getTypeParser');
  const parser: unknown =
    typeof getTypeParser === 'function' ? Reflect.apply(getTypeParser, client, [dataTypeID, 'text']) : undefined;
  if (typeof parser !== 'function') return (text) => text;
  return (text) => {
    const value: unknown = Reflect.apply(parser, undefined, [text]);
    return value;
  };
}

/** node-postgres's protocol writers the pipeline uses on a client's connection. */
const WRITERS = ['parse', 'bind', 'describe', 'execute', 'close', 'sync'] as const;

/**
 * Whether `client` can take the opening pipeline: node-postgres's JavaScript client, whose
 * connection writes protocol messages, and not in its own `pipeline` mode (which refuses a
 * submittable). The native client (`pg.native`) and a pool's double open as before, BEGIN first.
 *
 * @example
 * ```ts
 * if (ledgerRun && takesPipeline(client)) return pgSession(client, prepare, stopListening, lockTimeoutMs);
 * ```
 */
export function takesPipeline(client: object): boolean {
  if (Reflect.get(client, 'pipeline') === true) return false;
  const connection: unknown = Reflect.get(client, 'connection');
  return (
    typeof connection === 'object' &&
    connection !== null &&
    WRITERS.every((writer) => typeof Reflect.get(connection, writer) === 'function')
  );
}

/**
 * Opens a run on `client` in one round trip ({@link BeginInOneRoundTrip}) and answers its first
 * statement. A connection on which DEALLOCATE ALL ran since they were prepared (the work may send
 * it through tx) has lost them: nothing of the run happened, so it opens once more, preparing them
 * again, and `lostStatements` hears of it (node-postgres's own prepared statements are gone too).
 *
 * @example
 * ```ts
 * const claimed = await openInOneRoundTrip(client, 5000, { text, values }, true, () => undefined);
 * ```
 */
export async function openInOneRoundTrip(
  client: PgClientLike,
  lockTimeoutMs: number,
  first: { readonly text: string; readonly values: readonly unknown[] },
  prepare: boolean,
  lostStatements: (error: unknown) => void,
): Promise<SqlResult> {
  const parserOf = (oid: number) => typeParserOf(client, oid);
  const open = () => {
    const opening = new BeginInOneRoundTrip(lockTimeoutMs, first, prepare ? openingName : undefined, parserOf);
    // node-postgres's query(submittable) form: not in PgClientLike, which a pool's double need not answer.
    const query: unknown = Reflect.get(client, 'query');
    if (typeof query !== 'function') throw new TypeError('the pool handed out a client without query()');
    Reflect.apply(query, client, [opening]);
    return opening.answer;
  };
  try {
    return await open();
  } catch (error) {
    lostStatements(error);
    if (!preparedStatementGone(error)) throw error;
    await client.query('ROLLBACK');
    return open();
  }
}
