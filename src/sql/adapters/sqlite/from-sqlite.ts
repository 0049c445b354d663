/**
 * The SQLite adapter over the runtime's own `node:sqlite` (loaded only when `fromSqlite` is
 * called, so importing the package never prints Node's ExperimentalWarning). The ledger runs on
 * a connection of its own, so nothing the app writes on its connections joins a run's
 * transaction. One connection runs one transaction at a time: runs take turns on it (waiting at
 * most `lockTimeoutMs`, then `in_flight`), and other connections and processes wait on SQLite's
 * write lock the same way; runs that wait their turn share one COMMIT (shared-commit.ts). A run's
 * session, and how its part ends, is sqlite-run.ts.
 *
 * @module
 */
import type { DatabaseSync } from 'node:sqlite';
import { ConfigurationError } from '../../../core/errors/base.js';
import { milliseconds } from '../../../core/milliseconds.js';
import { BEGIN, isBusyCode, MAX_RUN_MS, OPEN_FILE, SAVEPOINT } from '../../dialects/sqlite/session.js';
import type { SqlClient } from '../../sql-client.js';
import { Connection, type SqliteValue, SqliteRun } from './sqlite-run.js';

export type { SqliteValue } from './sqlite-run.js';

/** A `node:sqlite` `DatabaseSync` (or a database with its `exec` and `prepare`): the file it has open is the one the ledger opens again. */
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
  if (
    typeof module !== 'object' ||
    module === null ||
    !('DatabaseSync' in module) ||
    typeof module.DatabaseSync !== 'function'
  ) {
    throw new ConfigurationError(
      `fromSqlite needs the runtime's node:sqlite, which ${SQLITE_NODE} has (this is ${typeof process === 'object' ? `Node ${process.versions.node}` : 'not Node'})`,
      'sqlite',
    );
  }
  return module as { DatabaseSync: new (path: string) => DatabaseSync };
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const isBusy = (error: unknown) =>
  typeof error === 'object' &&
  error !== null &&
  'errcode' in error &&
  typeof error.errcode === 'number' &&
  isBusyCode(error.errcode);
/** Options of {@link fromSqlite}. */
export interface FromSqliteOptions {
  /**
   * The most one run may take on SQLite, in ms, whatever the handler's `handlerTimeoutMs` (the
   * shorter wins). SQLite has one writer: a run holds the file's write lock from its claim to its
   * COMMIT, so while one handler runs, every other callback waits. Past this time the run is
   * rolled back at once (the gateway is answered 503 and retries it) and the lock is free for the
   * others: a stuck handler costs other payments at most this long, well inside the gateway's
   * three deliveries in about 6 s (see docs/ledger.md, "SQLite: one writer").
   *
   * @default 2000
   * @example
   * ```ts
   * fromSqlite('./shop.db', { maxRunMs: 1_500 });
   * ```
   */
  maxRunMs?: number | undefined;
}

/** A file's path as SQLite reports it for its main database: '' for a temporary or in-memory one. */
function fileOf(database: SqliteDatabaseLike): string {
  const rows = database.prepare('PRAGMA database_list').all();
  const main = rows.find(
    (row): row is { file: unknown } =>
      typeof row === 'object' && row !== null && 'name' in row && row.name === 'main' && 'file' in row,
  );
  return typeof main?.file === 'string' ? main.file : '';
}

/** Why a database only this process sees is refused: a retry that reaches another process would fulfil twice. */
function inMemoryRefused(what: string): ConfigurationError {
  return new ConfigurationError(
    `fromSqlite needs a database file: ${what} is a database of this process alone, empty on restart, and each worker of a cluster would keep its own ledger, so a retry that reaches another worker fulfils the payment a second time`,
    'path',
  );
}

/** Opens the ledger's own connection to `path`, refusing one that is not a file on disk. */
function openFile(path: string): DatabaseSync {
  if (path === '' || path === ':memory:') throw inMemoryRefused(path === '' ? 'an empty path' : "':memory:'");
  const { DatabaseSync: Database } = loadSqlite();
  const opened = new Database(path);
  if (fileOf(opened) === '') {
    opened.close();
    throw inMemoryRefused(`'${path}'`);
  }
  opened.exec(OPEN_FILE);
  return opened;
}

/**
 * The ledger in a SQLite file, through the runtime's `node:sqlite` (Node 22.13+): the durable
 * default for one server. The ledger works on a connection of its own to the file: given a path,
 * it opens it (created if absent); given the app's `DatabaseSync`, it opens the same file again
 * (the path is read with `PRAGMA database_list`, which every `node:sqlite` answers). Either way
 * the file is switched to WAL (the app's reads never wait for a run) with `synchronous=NORMAL`
 * on the ledger's connection. The handler's `tx` is that connection, for the run's time: when the
 * merchant's orders are in the same file, the handler's writes commit with the ledger; writes
 * the app makes on its own connection meanwhile never join the run (SQLite has one writer: they
 * wait for the lock or fail with SQLITE_BUSY, as the app's `timeout` says). `':memory:'`, `''`
 * and a `DatabaseSync` of either are a ConfigurationError: each process would keep its own ledger.
 *
 * @example
 * ```ts
 * const ledger = new SqlLedger(fromSqlite('./shop.db'));
 * await ledger.ensureSchema();
 * // onEvent: (event, { tx }) => { tx.prepare('UPDATE orders SET paid = 1 WHERE id = ?').run(event.signed.reference_id); }
 * ```
 */
export function fromSqlite(
  pathOrDatabase: string | SqliteDatabaseLike,
  options: FromSqliteOptions = {},
): SqlClient<DatabaseSync> {
  const maxRunMs = milliseconds(options.maxRunMs ?? MAX_RUN_MS, 'maxRunMs');
  let db: DatabaseSync;
  if (typeof pathOrDatabase === 'string') {
    db = openFile(pathOrDatabase);
  } else if (
    typeof pathOrDatabase === 'object' &&
    pathOrDatabase !== null &&
    typeof pathOrDatabase.exec === 'function' &&
    typeof pathOrDatabase.prepare === 'function'
  ) {
    const file = fileOf(pathOrDatabase);
    if (file === '') throw inMemoryRefused('a DatabaseSync of :memory: (or of a temporary file)');
    db = openFile(file);
  } else {
    throw new ConfigurationError('fromSqlite takes a file path or a node:sqlite DatabaseSync', 'database');
  }
  const connection = new Connection(db);
  return {
    dialect: 'sqlite',
    maxRunMs,
    commitChecked: true,
    sharesCommit: true,
    async begin(lockTimeoutMs, ledgerRun = false) {
      // A ledger run's time is bounded: it may share a COMMIT with the runs beside it.
      const sharesCommit = ledgerRun;
      const deadline = Date.now() + lockTimeoutMs;
      const turn = await connection.turns.take(lockTimeoutMs);
      // The run before let this one into its transaction (their COMMIT is shared); a session
      // that shares none (its time is not bounded) ends that transaction first.
      if (connection.shared.open && sharesCommit) {
        try {
          db.exec(SAVEPOINT);
        } catch (error) {
          connection.lose(error);
          turn.giveBack();
          throw error;
        }
        connection.shared.runs++;
        return new SqliteRun(connection, turn, { joined: true, shares: true });
      }
      if (connection.shared.open) connection.commitShared();
      // Another connection holds the write lock: wait for it without blocking the event loop.
      for (let pause = 5; ; pause = Math.min(pause * 2, 50)) {
        try {
          db.exec(BEGIN);
          break;
        } catch (error) {
          if (!isBusy(error) || Date.now() >= deadline) {
            turn.giveBack();
            throw error;
          }
          await sleep(pause);
        }
      }
      connection.shared.began(performance.now());
      return new SqliteRun(connection, turn, { joined: false, shares: sharesCommit });
    },
  };
}
