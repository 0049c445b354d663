/**
 * The database password never shows in util.inspect or JSON.stringify of what the ledger hands
 * the work or holds: a handler that logs its `tx` (console.log is util.inspect), an error
 * reporter that serialises the handler's arguments, a merchant who logs the ledger. mysql2's
 * `tx` is the run's PoolConnection, whose config holds the password (console.log printed it);
 * Drizzle's over mysql2 reaches it (a logger's circular-safe JSON printed it), and node-postgres
 * keeps it as a hidden property (util.inspect with showHidden printed it). Prisma's tx is in
 * sql/prisma/scenarios.test.ts. Real MariaDB 10.11 (a user
 * with a password) and PostgreSQL 15 (trust authentication: the password given is still in the
 * client's configuration, as in production), through the public SqlLedger and its adapters.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { format, inspect } from 'node:util';
import { drizzle as drizzleMysql } from 'drizzle-orm/mysql2';
import { drizzle as drizzlePg } from 'drizzle-orm/node-postgres';
import { Kysely, MysqlDialect, PostgresDialect } from 'kysely';
import { createPool as createCallbackPool, type Pool as CallbackPool } from 'mysql2';
import mysql from 'mysql2/promise';
import pg from 'pg';
import postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  SqlLedger,
  fromDrizzle,
  fromKysely,
  fromMysql2,
  fromPg,
  fromPostgresJs,
  fromSqlite,
  type SqlClient,
} from '../../../src/sql/index.js';
import { MariadbServer } from '../../helpers/mariadb.js';
import { PostgresServer } from '../../helpers/postgres.js';
import { shownInLogs as shown } from '../../helpers/shown.js';

const PASSWORD = 'Sup3r-secret_db-pw';
const OPTIONS = { raiseMark: false, completedTtlMs: 60_000 } as const;

let mariadb: MariadbServer;
let postgresServer: PostgresServer;
/** The merchant's pools: their user logs in with {@link PASSWORD}. */
let pool: mysql.Pool;
let callbackPool: CallbackPool;
let pgPool: pg.Pool;
let pgPoolByUrl: pg.Pool;
let sql: postgres.Sql;
let sqliteDir: string;

beforeAll(async () => {
  [mariadb, postgresServer] = await Promise.all([MariadbServer.start(), PostgresServer.start()]);
  const root = mysql.createPool({ ...mariadb.options, connectionLimit: 1 });
  try {
    await root.query('CREATE USER merchant@127.0.0.1 IDENTIFIED BY ?', [PASSWORD]);
    await root.query('GRANT ALL ON ledger_test.* TO merchant@127.0.0.1');
  } finally {
    await root.end();
  }
  pool = mysql.createPool({ ...mariadb.options, user: 'merchant', password: PASSWORD, connectionLimit: 2 });
  callbackPool = createCallbackPool({ ...mariadb.options, user: 'merchant', password: PASSWORD, connectionLimit: 2 });
  const url = postgresServer.url.replace('postgres@', `postgres:${PASSWORD}@`);
  pgPool = new pg.Pool({ host: '127.0.0.1', port: postgresServer.port, user: 'postgres', password: PASSWORD, max: 2 });
  pgPoolByUrl = new pg.Pool({ connectionString: url, max: 2 });
  sql = postgres(url, { max: 2, onnotice: () => undefined });
  sqliteDir = mkdtempSync(join(tmpdir(), 'myr-secrets-'));
}, 60_000);
afterAll(async () => {
  await Promise.all([pool?.end(), pgPool?.end(), pgPoolByUrl?.end(), sql?.end({ timeout: 1 })]);
  await new Promise((resolve) => (callbackPool ? callbackPool.end(resolve) : resolve(undefined)));
  await Promise.all([mariadb?.destroy(), postgresServer?.destroy()]);
  if (sqliteDir) rmSync(sqliteDir, { recursive: true, force: true });
});

describe("mysql2: the work's tx", () => {
  it('shows no password in util.inspect (at any depth) or JSON.stringify, during its run and after; it still says which connection it is', async () => {
    const ledger = new SqlLedger(fromMysql2(pool), { table: 'ledger_secrets_mysql2' });
    await ledger.ensureSchema();
    // The premise: the merchant's own pool holds the password, within reach of the connection.
    expect(inspect(pool, { depth: null })).toContain(PASSWORD);
    let kept: mysql.PoolConnection | undefined;
    const seen: string[] = [];
    const run = await ledger.run(
      'secrets:mysql2',
      async (tx) => {
        kept = tx;
        const [rows] = await tx.query<mysql.RowDataPacket[]>('SELECT CURRENT_USER() AS user');
        const prepared = await tx.prepare('SELECT ? AS one');
        seen.push(shown(tx), shown({ tx }), shown(prepared));
        expect(inspect(tx)).toContain(String(tx.threadId));
        return rows[0]?.user as unknown;
      },
      OPTIONS,
    );
    expect(run).toEqual({ outcome: 'processed', value: 'merchant@127.0.0.1' });
    seen.push(shown(kept), shown(ledger));
    for (const each of seen) expect(each).not.toContain(PASSWORD);
  });
});

describe("every adapter: the work's tx, the ledger and its client show no password in util.inspect or JSON.stringify", () => {
  const clients: Record<string, () => SqlClient<unknown>> = {
    'Kysely (mysql2)': () =>
      fromKysely(new Kysely<Record<string, never>>({ dialect: new MysqlDialect({ pool: callbackPool }) })),
    'Drizzle (mysql2)': () => fromDrizzle(drizzleMysql(pool)),
    'node-postgres (password option)': () => fromPg(pgPool),
    'node-postgres (connection string)': () => fromPg(pgPoolByUrl),
    'Kysely (node-postgres)': () =>
      fromKysely(new Kysely<Record<string, never>>({ dialect: new PostgresDialect({ pool: pgPoolByUrl }) })),
    'Drizzle (node-postgres)': () => fromDrizzle(drizzlePg(pgPoolByUrl)),
    'postgres.js': () => fromPostgresJs(sql),
    'node:sqlite': () => fromSqlite(join(sqliteDir, 'shop.db')),
  };

  it.each(Object.keys(clients))('%s', async (name) => {
    const client = clients[name]!();
    const ledger = new SqlLedger(client, { table: `ledger_secrets_${name.replace(/\W/g, '').toLowerCase()}` });
    await ledger.ensureSchema();
    const seen: string[] = [];
    const run = await ledger.run(`secrets:${name}`, (tx) => void seen.push(shown(tx), shown({ tx })), OPTIONS);
    expect(run.outcome).toBe('processed');
    seen.push(shown(ledger), shown(client));
    for (const each of seen) expect(each).not.toContain(PASSWORD);
  });
});

/**
 * `console.log('%o', tx)` prints with showProxy (and the Node REPL prints every value so): a
 * Proxy is shown as its target and handler, so the target of each `tx` must hold nothing of the
 * connection (mysql2's config, node-postgres's connection parameters); `customInspect: false`
 * prints the target's own keys.
 */
describe("the work's tx as console.log('%o', tx) and the REPL print it", () => {
  const clients: Record<string, () => SqlClient<unknown>> = {
    mysql2: () => fromMysql2(pool),
    'node-postgres': () => fromPg(pgPool),
    'Drizzle (node-postgres)': () => fromDrizzle(drizzlePg(pgPoolByUrl)),
  };
  it.each(Object.keys(clients))('%s: shows no password', async (name) => {
    const ledger = new SqlLedger(clients[name]!(), {
      table: `ledger_secrets_o_${name.replace(/\W/g, '').toLowerCase()}`,
    });
    await ledger.ensureSchema();
    const seen: string[] = [];
    const run = await ledger.run(
      `secrets-o:${name}`,
      (tx) =>
        void seen.push(
          format('%o', tx),
          inspect(tx, { showProxy: true }),
          inspect(tx, { customInspect: false, showHidden: true, depth: Infinity }),
        ),
      OPTIONS,
    );
    expect(run.outcome).toBe('processed');
    expect(seen).toHaveLength(3);
    for (const each of seen) expect(each).not.toContain(PASSWORD);
  });
});
