/**
 * A shop on SQLite for the ledger's tests: a database file of its own (sqlite-file.ts) with
 * orders, parcels an order's shipment must name (a foreign key checked at COMMIT) and stock, the
 * app's own connection to it, and the ledger on a connection of its own to the same file.
 */
import type { DatabaseSync } from 'node:sqlite';
import { onTestFinished, vi } from 'vitest';
import { fromSqlite, SqlLedger } from '../../src/sql/index.js';
import { sqliteFile } from './sqlite-file.js';

/** A run's options as a callback's: its record kept a minute, no payment mark raised. */
export const once = { raiseMark: false, completedTtlMs: 60_000 } as const;

/** The handler's write: the order, through `tx`. */
export const fulfil = (tx: DatabaseSync, id: string): void =>
  void tx.prepare('INSERT INTO orders (id) VALUES (?)').run(id);

/** A write SQLite refuses at COMMIT: a shipment naming parcel 7, which does not exist. */
export const breakForeignKey = (tx: DatabaseSync, id: string): void =>
  void tx.prepare('INSERT INTO shipments (id, parcel) VALUES (?, 7)').run(id);

/**
 * Stops `performance.now()` until the test ends, for a test whose case is runs sharing one
 * COMMIT: the shared transaction takes new runs for 5 ms of wall-clock time, and a busy machine
 * can deschedule the process past that between two runs, which then commit alone (correct, but
 * not the case under test); a run descheduled past SLOW_RUN_MS while others wait on it would
 * pause sharing. Timers still run, but what the adapter measures on this clock stands still: no
 * run is slow, a pause already begun stays on, and a run waiting for the connection is never
 * turned away by its lock timeout.
 */
export function stopTheRunClock(): void {
  vi.useFakeTimers({ toFake: ['performance'] });
  onTestFinished(() => {
    vi.useRealTimers();
  });
}

export const sleep = (ms: number): Promise<unknown> => new Promise((resolve) => setTimeout(resolve, ms));

/** A new shop: `maxRunMs` for `fromSqlite`, `lockTimeoutMs` (5 s unless given) for the ledger. */
export async function sqliteShop(options: { maxRunMs?: number; lockTimeoutMs?: number } = {}) {
  const app = sqliteFile();
  app.exec(`PRAGMA journal_mode = WAL;
    CREATE TABLE orders (id TEXT NOT NULL);
    CREATE TABLE parcels (id INTEGER PRIMARY KEY);
    CREATE TABLE shipments (id TEXT NOT NULL, parcel INTEGER REFERENCES parcels (id) DEFERRABLE INITIALLY DEFERRED);
    CREATE TABLE stock (n INTEGER NOT NULL); INSERT INTO stock VALUES (1), (2), (3)`);
  const client = fromSqlite(app, options.maxRunMs === undefined ? {} : { maxRunMs: options.maxRunMs });
  const ledger = new SqlLedger(client, { lockTimeoutMs: options.lockTimeoutMs ?? 5000 });
  await ledger.ensureSchema();
  /** Orders of `id` the app's own connection reads (committed ones). */
  const written = (id: string) => Number(app.prepare('SELECT count(*) AS n FROM orders WHERE id = ?').get(id)?.n);
  /** Every order the app's own connection reads. */
  const all = () => Number(app.prepare('SELECT count(*) AS n FROM orders').get()?.n);
  return { app, client, ledger, written, all };
}
