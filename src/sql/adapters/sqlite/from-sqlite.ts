/**
 * The SQLite adapter over the runtime's own `node:sqlite` (loaded only when `fromSqlite` is
 * called, so importing the package never prints Node's ExperimentalWarning). One SQLite
 * connection runs one transaction at a time: runs on the same database object take turns
 * (waiting at most `lockTimeoutMs`, then `in_flight`), and other processes wait on SQLite's
 * write lock the same way.
 *
 * @module
 */
import type { DatabaseSync } from 'node:sqlite';
import { ConfigurationError } from '../../../core/errors/base.js';
import { BEGIN, COMMIT, isBusyCode, OPEN_FILE, ROLLBACK } from '../../dialects/sqlite/session.js';
import type { SqlClient, SqlSession } from '../../sql-client.js';

/** A value SQLite binds as a parameter. */
export type SqliteValue = null | number | bigint | string;

/** A `node:sqlite` `DatabaseSync` (or a database with its `exec` and `prepare`), as the ledger drives it. */
export interface SqliteDatabaseLike {
  /** Runs SQL without parameters. */
  exec(sql: string): void;
  /** Compiles one statement. */
  prepare(sql: string): {
    /** Runs it; answers the rows it changed. */
    run(...params: SqliteValue[]): {
      /** Rows inserted, updated or deleted. */
      changes: number | bigint;
    };
    /** Runs it; answers its rows. */
    all(...params: SqliteValue[]): unknown[];
  };
}

/** The first Node releases with `node:sqlite` without a flag. */
const SQLITE_NODE = 'Node 22.13 or later (or 23.4 or later)';

function loadSqlite(): { DatabaseSync: new (path: string) => DatabaseSync } {
  const module: unknown = typeof process === 'object' ? process.getBuiltinModule?.('node:sqlite') : undefined;
  if (typeof module !== 'object' || module === null || !('DatabaseSync' in module) || typeof module.DatabaseSync !== 'function') {
    throw new ConfigurationError(`fromSqlite needs the runtime's node:sqlite, which ${SQLITE_NODE} has (this is ${typeof process === 'object' ? `Node ${process.versions.node}` : 'not Node'})`, 'sqlite');
  }
  return module as { DatabaseSync: new (path: string) => DatabaseSync };
}

function busy(message: string): Error {
  return Object.assign(new Error(message), { code: 'SQLITE_BUSY' });
}

/** Takes turns on one connection: one transaction at a time, in arrival order. */
class Turns {
  #held = false;
  readonly #waiting: (() => void)[] = [];

  take(timeoutMs: number): Promise<() => void> {
    let given = false;
    const giveBack = () => {
      if (given) return;
      given = true;
      const next = this.#waiting.shift();
      if (next) next();
      else this.#held = false;
    };
    if (!this.#held) {
      this.#held = true;
      return Promise.resolve(giveBack);
    }
    return new Promise((resolve, reject) => {
      const grant = () => {
        clearTimeout(timer);
        resolve(giveBack);
      };
      const timer = setTimeout(() => {
        this.#waiting.splice(this.#waiting.indexOf(grant), 1);
        reject(busy(`the SQLite connection was busy for ${timeoutMs} ms`));
      }, timeoutMs);
      this.#waiting.push(grant);
    });
  }
}

const turnsOf = new WeakMap<object, Turns>();
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const isBusy = (error: unknown) => typeof error === 'object' && error !== null && 'errcode' in error && typeof error.errcode === 'number' && isBusyCode(error.errcode);
function bindable(value: unknown): SqliteValue {
  if (value === null || typeof value === 'number' || typeof value === 'bigint' || typeof value === 'string') return value;
  throw new TypeError(`the ledger binds only strings and numbers to SQLite (got ${typeof value})`);
}

/**
 * The ledger in a SQLite database, through the runtime's `node:sqlite` (Node 22.13+): the
 * durable default for one server. Given a path, the file is opened (created if absent) in WAL
 * mode with `synchronous=NORMAL`, and the handler's `tx` is that `DatabaseSync`: when the
 * merchant's orders are in the same file, the handler's writes commit with the ledger. Given a
 * `DatabaseSync`, it is used as it is.
 *
 * @example
 * ```ts
 * const ledger = new SqlLedger(fromSqlite('./myr-ledger.db'));
 * await ledger.ensureSchema();
 * // onEvent: (event, { tx }) => { tx.prepare('UPDATE orders SET paid = 1 WHERE id = ?').run(event.signed.reference_id); }
 * ```
 */
export function fromSqlite(path: string): SqlClient<DatabaseSync>;
export function fromSqlite<D extends SqliteDatabaseLike>(database: D): SqlClient<D>;
export function fromSqlite(pathOrDatabase: string | SqliteDatabaseLike): SqlClient<SqliteDatabaseLike> {
  let db: SqliteDatabaseLike;
  if (typeof pathOrDatabase === 'string') {
    if (pathOrDatabase === '') throw new ConfigurationError('fromSqlite takes a file path (or a DatabaseSync); an empty path is a temporary database that forgets on restart', 'path');
    const { DatabaseSync: Database } = loadSqlite();
    const opened = new Database(pathOrDatabase);
    opened.exec(OPEN_FILE);
    db = opened;
  } else if (typeof pathOrDatabase === 'object' && pathOrDatabase !== null && typeof pathOrDatabase.exec === 'function' && typeof pathOrDatabase.prepare === 'function') {
    db = pathOrDatabase;
  } else {
    throw new ConfigurationError('fromSqlite takes a file path or a node:sqlite DatabaseSync', 'database');
  }
  const turns = turnsOf.get(db) ?? new Turns();
  turnsOf.set(db, turns);
  const prepared = new Map<string, ReturnType<SqliteDatabaseLike['prepare']>>();
  const statement = (text: string) => {
    let compiled = prepared.get(text);
    if (!compiled) prepared.set(text, (compiled = db.prepare(text)));
    return compiled;
  };
  return {
    dialect: 'sqlite',
    async begin(lockTimeoutMs) {
      const deadline = Date.now() + lockTimeoutMs;
      const giveBack = await turns.take(lockTimeoutMs);
      // Another process holds the write lock: wait for it without blocking the event loop.
      for (let pause = 5; ; pause = Math.min(pause * 2, 50)) {
        try {
          db.exec(BEGIN);
          break;
        } catch (error) {
          if (!isBusy(error) || Date.now() >= deadline) {
            giveBack();
            throw error;
          }
          await sleep(pause);
        }
      }
      const rollback = () => {
        try {
          db.exec(ROLLBACK);
        } catch {
          // Already rolled back (SQLite ends a transaction itself on some errors).
        }
        giveBack();
        return Promise.resolve();
      };
      const session: SqlSession<SqliteDatabaseLike> = {
        tx: db,
        query(text, params) {
          // Synchronous underneath; a throw becomes a rejection as with the other clients.
          return Promise.resolve().then(() => {
            const values = params.map(bindable);
            const compiled = statement(text);
            if (/^\s*SELECT/i.test(text)) return { rows: compiled.all(...values).filter((row): row is Record<string, unknown> => typeof row === 'object' && row !== null), affected: 0 };
            return { rows: [], affected: Number(compiled.run(...values).changes) };
          });
        },
        async commit() {
          try {
            db.exec(COMMIT);
          } catch (error) {
            await rollback();
            throw error;
          }
          giveBack();
        },
        rollback,
        abandon(settled) {
          void settled.then(rollback);
        },
      };
      return session;
    },
  };
}
