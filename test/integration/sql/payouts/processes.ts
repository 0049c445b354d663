/**
 * What the payout tests that run merchant processes share (crash.test.ts, processes.test.ts,
 * fleet-pacing.test.ts): real PostgreSQL, MariaDB and SQLite for the file, and sql/payouts/child.ts
 * started as a process of its own and killed with SIGKILL.
 */
import { fork, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import mysql from 'mysql2/promise';
import pg from 'pg';
import { DatabaseSync } from 'node:sqlite';
import { afterAll, beforeAll, onTestFinished } from 'vitest';
import { MemoryRateLimiter, MemoryTokenStore, MyrGateway } from '../../../../src/index.js';
import { SqlPayouts, fromMysql2, fromPg, fromSqlite, type SqlClient } from '../../../../src/sql/index.js';
import type { MockGateway, MockHttpServer } from '../../../../src/testing/index.js';
import { MariadbServer } from '../../../helpers/mariadb.js';
import { PostgresServer } from '../../../helpers/postgres.js';

const CHILD = fileURLToPath(new URL('./child.ts', import.meta.url));

/** One database as the processes open it (child.ts reads `kind` and `url()` from its environment). */
export interface ProcessDb {
  readonly name: string;
  readonly kind: 'postgres' | 'mysql' | 'sqlite';
  url(): string;
  client(): SqlClient<unknown>;
  /** The number a `SELECT count(*) AS n …` answers, read on a connection of the test's own (no transaction). */
  count(select: string): Promise<number>;
}

/** The databases of `kinds`, started before the file's tests and removed after them. */
export function databasesForFile(kinds: readonly ProcessDb['kind'][]): ProcessDb[] {
  let postgres: PostgresServer | undefined;
  let mariadb: MariadbServer | undefined;
  let pgPool: pg.Pool | undefined;
  let mysqlPool: mysql.Pool | undefined;
  let dir: string | undefined;
  let sqlite: DatabaseSync | undefined;
  beforeAll(async () => {
    [postgres, mariadb] = await Promise.all([
      kinds.includes('postgres') ? PostgresServer.start() : undefined,
      kinds.includes('mysql') ? MariadbServer.start() : undefined,
    ]);
    if (postgres) pgPool = new pg.Pool({ connectionString: postgres.url, max: 4 });
    if (mariadb) mysqlPool = mysql.createPool({ ...mariadb.options, connectionLimit: 4 });
    dir = mkdtempSync(join(tmpdir(), 'myr-payouts-processes-'));
  }, 60_000);
  afterAll(async () => {
    await pgPool?.end();
    await mysqlPool?.end();
    sqlite?.close();
    await Promise.all([postgres?.destroy(), mariadb?.destroy()]);
    if (dir) rmSync(dir, { recursive: true, force: true });
  });
  const started = <T>(value: T | undefined): T => {
    if (value === undefined) throw new Error('the databases start in the file’s beforeAll: read them in a test');
    return value;
  };
  const all: ProcessDb[] = [
    {
      name: 'PostgreSQL',
      kind: 'postgres',
      url: () => started(postgres).url,
      client: () => fromPg(started(pgPool)),
      count: async (select) => Number((await started(pgPool).query<{ n: unknown }>(select)).rows[0]?.n),
    },
    {
      name: 'MariaDB',
      kind: 'mysql',
      url: () => JSON.stringify(started(mariadb).options),
      client: () => fromMysql2(started(mysqlPool)),
      count: async (select) => Number((await started(mysqlPool).query<mysql.RowDataPacket[]>(select))[0][0]?.n),
    },
    {
      name: 'SQLite',
      kind: 'sqlite',
      url: () => join(started(dir), 'shop.db'),
      client: () => fromSqlite(join(started(dir), 'shop.db')),
      // WAL (the ledger's connection sets it): this reader never waits on the workers' writes.
      count: async (select) =>
        Number((sqlite ??= new DatabaseSync(join(started(dir), 'shop.db'))).prepare(select).get()?.n),
    },
  ];
  return all.filter((db) => kinds.includes(db.kind));
}

/**
 * A payout table of its own on `db` (its schema made, hooks that do nothing), and the environment
 * child.ts needs to work on it against the mock at `server`.
 */
export async function outboxOn(db: ProcessDb, mock: MockGateway, server: MockHttpServer) {
  const table = `payouts_${randomUUID().replaceAll('-', '').slice(0, 12)}`;
  const payouts = new SqlPayouts(db.client(), { table, onRefused: () => undefined, onSettled: () => undefined });
  await payouts.ensureSchema();
  const env = {
    DB: db.kind,
    DB_URL: db.url(),
    TABLE: table,
    BASE_URL: server.baseUrl,
    MERCHANT_ID: mock.merchant.merchantId,
    API_KEY: mock.merchant.apiKey,
  };
  return { table, payouts, env };
}

/** A client of the mock for the test's own worker (a token store and limiter of its own). */
export const gatewayOf = (mock: MockGateway, server: MockHttpServer) =>
  new MyrGateway({
    baseUrl: server.baseUrl,
    ...mock.merchant,
    allowInsecureLoopback: true,
    tokenStore: new MemoryTokenStore(),
    rateLimiter: new MemoryRateLimiter(),
  });

/**
 * Starts sql/payouts/child.ts, from inside a test; resolves with it once it said `until`. Every
 * message it sends is pushed onto `messages`. It is killed when that test finishes, if still
 * running (a test that failed or timed out before its own kill): an orphan would keep draining
 * the outbox into the next test and hold the file open at teardown.
 */
export function child(env: Record<string, string>, until: string, messages: unknown[] = []): Promise<ChildProcess> {
  const process_ = fork(CHILD, [], {
    execArgv: ['--import', import.meta.resolve('tsx')],
    env: { ...process.env, ...env },
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  onTestFinished(() => killed(process_));
  process_.on('message', (message) => messages.push(message));
  return new Promise((resolve, reject) => {
    process_.on('message', (message) => message === until && resolve(process_));
    process_.on('exit', (code) =>
      reject(new Error(`sql/payouts/child.ts exited (${String(code)}) before it said ${until}`)),
    );
  });
}

/** Kills a child with SIGKILL; resolves once it exited. */
export const killed = (process_: ChildProcess) =>
  new Promise<void>((resolve) => {
    if (process_.exitCode !== null || process_.signalCode !== null) return resolve();
    process_.once('exit', () => resolve());
    process_.kill('SIGKILL');
  });

/** How long {@link untilChildGets} waits for what a child is doing: far past any step of these tests. */
const CHILD_STEP_MS = 15_000;

/**
 * Resolves once `condition` holds, read every 20 ms while `process_` works towards it. Rejects at
 * once, naming `what`, when the child exits first (it failed: its stderr is the test's), and
 * after {@link CHILD_STEP_MS}: a wait that never ends would cost the test its whole timeout and
 * say nothing of where it stopped.
 */
export async function untilChildGets(
  process_: ChildProcess,
  what: string,
  condition: () => boolean | Promise<boolean>,
): Promise<void> {
  const since = Date.now();
  while (!(await condition())) {
    if (process_.exitCode !== null || process_.signalCode !== null)
      throw new Error(
        `sql/payouts/child.ts exited (${String(process_.exitCode ?? process_.signalCode)}) before ${what}`,
      );
    if (Date.now() - since > CHILD_STEP_MS)
      throw new Error(`sql/payouts/child.ts had not got to ${what} after ${CHILD_STEP_MS} ms`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/** What child.ts told under `key` (`report`, `refused`, `began`, …), in the order it arrived. */
export const told = (messages: readonly unknown[], key: string): unknown[] =>
  messages.flatMap((message) =>
    typeof message === 'object' && message !== null && key in message ? [Reflect.get(message, key)] : [],
  );
