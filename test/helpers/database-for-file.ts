/**
 * A real database for one test file, with a pool of the merchant's client on it: started before
 * the file's tests, the pool ended and the server removed after them. Call at the top of the file;
 * read `server` and `pool` in hooks and tests (before the file's beforeAll they do not exist yet).
 */
import mysql from 'mysql2/promise';
import pg from 'pg';
import { afterAll, beforeAll } from 'vitest';
import { MariadbServer } from './mariadb.js';
import { PostgresServer } from './postgres.js';

/** A database server of the file and the pool the file's tests use. */
export interface DatabaseForFile<S, P> {
  readonly server: S;
  readonly pool: P;
}

/** Starting a server (MariaDB initialises a data directory first) takes seconds on a shared machine. */
const START_TIMEOUT_MS = 60_000;

function forFile<S extends { destroy(): Promise<void> }, P extends { end(): Promise<void> }>(
  start: () => Promise<S>,
  connect: (server: S) => P,
  ready: ((pool: P) => Promise<unknown>) | undefined,
): DatabaseForFile<S, P> {
  let server: S | undefined;
  let pool: P | undefined;
  beforeAll(async () => {
    server = await start();
    pool = connect(server);
    await ready?.(pool);
  }, START_TIMEOUT_MS);
  afterAll(async () => {
    await pool?.end();
    await server?.destroy();
  });
  const started = <T>(value: T | undefined): T => {
    if (value === undefined)
      throw new Error('the database of this file starts in its beforeAll: read it from a hook or a test');
    return value;
  };
  return {
    get server() {
      return started(server);
    },
    get pool() {
      return started(pool);
    },
  };
}

/**
 * PostgreSQL 15 and a node-postgres pool of `max` clients on it; `ready` runs once both are up
 * (the file's tables).
 */
export function postgresForFile(
  max: number,
  ready?: (pool: pg.Pool) => Promise<unknown>,
): DatabaseForFile<PostgresServer, pg.Pool> {
  return forFile(
    () => PostgresServer.start(),
    (server) => new pg.Pool({ connectionString: server.url, max }),
    ready,
  );
}

/**
 * MariaDB 10.11 (with more server options `args`) and a mysql2 promise pool of `connectionLimit`
 * connections on it; `ready` runs once both are up (the file's tables).
 */
export function mariadbForFile(
  { args = [], connectionLimit }: { args?: readonly string[]; connectionLimit: number },
  ready?: (pool: mysql.Pool) => Promise<unknown>,
): DatabaseForFile<MariadbServer, mysql.Pool> {
  return forFile(
    () => MariadbServer.start({ args }),
    (server) => mysql.createPool({ ...server.options, connectionLimit }),
    ready,
  );
}
