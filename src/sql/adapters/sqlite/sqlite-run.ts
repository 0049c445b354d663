/**
 * One run's session on the SQLite adapter's connection: its statements, and how its part ends in
 * the connection's transaction: committed into it (with the COMMIT it may share with the runs
 * beside it, shared-commit.ts) or rolled back out of it (to its SAVEPOINT when it joined one
 * another run began), at once when its time passes.
 *
 * @module
 */
import type { DatabaseSync } from 'node:sqlite';
import { COMMIT, RELEASE, ROLLBACK, ROLLBACK_TO } from '../../dialects/sqlite/session.js';
import { usedAfterRun, type SqlResult, type SqlSession, type SqlStatement } from '../../sql-client.js';
import { SharedCommit, sharedCommitFailed } from './shared-commit.js';
import { SqliteTxGuard } from './sqlite-tx.js';
import { type Turn, Turns } from './turns.js';

/** A value SQLite binds as a parameter. */
export type SqliteValue = null | number | bigint | string | Uint8Array;

function bindable(value: unknown): SqliteValue {
  if (
    value === null ||
    typeof value === 'number' ||
    typeof value === 'bigint' ||
    typeof value === 'string' ||
    value instanceof Uint8Array
  )
    return value;
  throw new TypeError(`the ledger binds only strings and numbers to SQLite (got ${typeof value})`);
}

/**
 * A read's rows. An integer past 2^53 (written by hand: shared state is input) makes node:sqlite
 * throw a RangeError for the whole read; read again with such values as bigints, the reader
 * refuses the one row (a payout set aside, a ledger row that is not the ledger's), not the read.
 */
function rowsOf(statement: Compiled['statement'], values: SqliteValue[]): ReturnType<Compiled['statement']['all']> {
  try {
    return statement.all(...values);
  } catch (error) {
    if (!(error instanceof RangeError)) throw error;
    statement.setReadBigInts(true);
    try {
      return statement.all(...values);
    } finally {
      statement.setReadBigInts(false);
    }
  }
}

/** The work ended the ledger's transaction: nothing of the run commits (code 25P02: the work's failure, 500). */
function notHeld(): Error {
  return Object.assign(
    new Error(
      "the ledger's transaction was no longer open when the work returned (nothing of the run committed): the work must not COMMIT or ROLLBACK tx, nor swallow a failed statement",
    ),
    { code: '25P02' },
  );
}

/** A statement compiled once, and whether it answers rows. */
interface Compiled {
  readonly statement: ReturnType<DatabaseSync['prepare']>;
  readonly reads: boolean;
}

/**
 * The ledger's connection: its statements, each compiled once on it (and whether it answers rows),
 * the runs' turns on it, and the transaction they share.
 */
export class Connection {
  readonly #compiled = new Map<string, Compiled>();
  readonly turns = new Turns();
  readonly shared = new SharedCommit();

  constructor(readonly db: DatabaseSync) {}

  /**
   * Ends the open transaction when a run's turn ends: it stays open for the next run waiting
   * (see shared-commit.ts), or COMMIT ends it, and the runs waiting on it are told.
   */
  endTurn(turn: Turn): void {
    if (!this.shared.staysOpen(this.turns.waiting, performance.now())) this.commitShared();
    turn.giveBack();
  }

  /** COMMIT ends the open transaction now, and the runs waiting on it are told. */
  commitShared(): void {
    try {
      this.db.exec(COMMIT);
      this.shared.landed();
    } catch (error) {
      this.lose(error);
    }
  }

  /** The open transaction is lost (a COMMIT or a savepoint failed): rolled back, and every run waiting on it fails. */
  lose(cause: unknown): void {
    try {
      this.db.exec(ROLLBACK);
    } catch {
      // Already rolled back (SQLite ends a transaction itself on some errors).
    }
    this.shared.failed(cause, performance.now());
  }

  of(text: string): Compiled {
    let found = this.#compiled.get(text);
    if (!found)
      this.#compiled.set(text, (found = { statement: this.db.prepare(text), reads: /^\s*SELECT/i.test(text) }));
    return found;
  }
}

/**
 * One run's transaction on the connection, from BEGIN (or from its SAVEPOINT in a transaction
 * another run began) to its end, when the turn is given back. A class, not closures: one per
 * run, and closures made per run are work per callback.
 */
export class SqliteRun implements SqlSession<DatabaseSync> {
  readonly #connection: Connection;
  readonly #turn: Turn;
  readonly #guard: SqliteTxGuard;
  /** Whether it joined a transaction another run began: its part is its SAVEPOINT's. */
  readonly #joined: boolean;
  /** Whether its transaction may stay open for the next run (a ledger run: its time is bounded). */
  readonly #shares: boolean;
  /** When it took the connection. */
  readonly #startedAt = performance.now();
  /** When it joined and rolled back while runs before it waited: the COMMIT of what it read. */
  #landed: Promise<void> | undefined;

  constructor(connection: Connection, turn: Turn, how: { joined: boolean; shares: boolean }) {
    this.#connection = connection;
    this.#turn = turn;
    this.#joined = how.joined;
    this.#shares = how.shares;
    this.#guard = new SqliteTxGuard(connection.db);
  }

  get tx(): DatabaseSync {
    return this.#guard.tx;
  }

  query(text: string, params: readonly unknown[]): Promise<SqlResult> {
    // Once the run ended, the connection may be another run's: nothing more goes out on this one.
    if (this.#guard.ended) return Promise.reject(usedAfterRun());
    // Synchronous underneath; a throw becomes a rejection as with the other clients.
    try {
      const { statement, reads } = this.#connection.of(text);
      const values = params.map(bindable);
      if (reads) return Promise.resolve({ rows: rowsOf(statement, values), affected: 0 });
      return Promise.resolve({ rows: [], affected: Number(statement.run(...values).changes) });
    } catch (error) {
      // SQLite ends the whole transaction itself on some failures (a full disk): COMMIT checks.
      this.#guard.mayHaveEnded = true;
      return Promise.reject(error);
    }
  }

  /** Resolves once what it read is committed: at once, unless it joined and rolled back while runs before it waited. */
  landed(): Promise<void> {
    return this.#landed ?? Promise.resolve();
  }

  /**
   * Its part goes into the transaction, and it resolves once that commits: at once when no other
   * run waits (or after only this run), else with the COMMIT it shares (shared-commit.ts).
   */
  commit(held: SqlStatement | undefined): Promise<void> {
    const connection = this.#connection;
    const { db, shared } = connection;
    const guard = this.#guard;
    if (guard.ended) return Promise.reject(usedAfterRun());
    const now = this.#stop();
    try {
      // The work may have ended the transaction (and begun another): its claim must still be
      // there. (A COMMIT of the work's leaves it there, and no savepoint: RELEASE or COMMIT fails.)
      if (
        held !== undefined &&
        guard.mayHaveEnded &&
        connection.of(held.text).statement.all(...held.params.map(bindable)).length !== 1
      ) {
        connection.lose(notHeld());
        this.#turn.giveBack();
        return Promise.reject(notHeld());
      }
      if (this.#joined) db.exec(RELEASE);
    } catch (error) {
      connection.lose(error);
      this.#turn.giveBack();
      return Promise.reject(error);
    }
    // After a work that may have ended the transaction, no other run joins what is left of it.
    if (this.#shares && !guard.mayHaveEnded && shared.staysOpen(connection.turns.waiting, now)) {
      const landed = shared.await();
      this.#turn.giveBack();
      return landed;
    }
    const shares = shared.pending > 0;
    try {
      db.exec(COMMIT);
    } catch (error) {
      connection.lose(error);
      this.#turn.giveBack();
      // Alone, the failure is this run's (a deferred constraint its work broke); shared, it may be another's.
      return Promise.reject(shares ? sharedCommitFailed(error) : error);
    }
    shared.landed();
    this.#turn.giveBack();
    return Promise.resolve();
  }

  rollback(): Promise<void> {
    this.#end();
    return Promise.resolve();
  }

  /**
   * The connection is the adapter's own: the run's time is up, so it lets go now (the work's tx
   * refuses what it sends after this), not when the work settles.
   */
  abandon(): void {
    this.#end();
  }

  /**
   * The run is over, however it ends: `tx` refuses from now on, the iterators it opened end, and
   * a ledger run's time on the connection is told to the shared COMMIT (a slow one pauses
   * sharing). Answers that moment, read once.
   */
  #stop(): number {
    const guard = this.#guard;
    guard.ended = true;
    guard.endIterators();
    const now = performance.now();
    if (this.#shares) this.#connection.shared.ran(now - this.#startedAt, now);
    return now;
  }

  /**
   * Rolls back its part (once) and ends its turn; `tx` refuses from now on. A run that began the
   * transaction rolls all of it back (nothing else is in it yet); one that joined rolls back to its
   * SAVEPOINT, and the transaction goes on for the runs committed into it.
   */
  #end(): void {
    const guard = this.#guard;
    if (guard.ended) return;
    this.#stop();
    const connection = this.#connection;
    if (!this.#joined) {
      try {
        connection.db.exec(ROLLBACK);
      } catch {
        // Already rolled back (SQLite ends a transaction itself on some errors).
      }
      connection.shared.landed();
      this.#turn.giveBack();
      return;
    }
    try {
      // A work that may have ended the transaction may also have made a savepoint of this name:
      // what is left is not to be trusted with the parts of the runs before it.
      if (guard.mayHaveEnded) throw new Error('the work may have ended the shared transaction through tx');
      connection.db.exec(ROLLBACK_TO);
      connection.db.exec(RELEASE);
    } catch (error) {
      // The transaction is gone (the work ended it, or SQLite did): the runs committed into it with it.
      connection.lose(error);
      this.#turn.giveBack();
      return;
    }
    // What it read may be the part of a run before it: its refusal is answered with their COMMIT.
    if (connection.shared.pending > 0) {
      this.#landed = connection.shared.await();
      this.#landed.catch(() => undefined);
    }
    connection.endTurn(this.#turn);
  }
}
