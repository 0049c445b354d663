/**
 * The doctor's check of the SQL ledger's table, when `MYR_GATEWAY_DATABASE_URL` names the
 * database: the same check `ensureSchema({ create: false })` makes at start-up (the table is
 * there, every column of the right type, on MySQL a key compared byte for byte), through the
 * merchant's own driver (`pg`, `mysql2`, or the runtime's `node:sqlite`), loaded from the project
 * the doctor runs in. Nothing is created or changed.
 *
 * @module
 */
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { ConfigurationError } from '../core/errors/base.js';
import {
  SqlLedger,
  fromMysql2,
  fromPg,
  fromSqlite,
  type Mysql2PoolLike,
  type PgPoolLike,
  type SqlClient,
} from '../sql/index.js';
import type { CheckResult, Environment } from './checks.js';

/** The variables of the ledger's check. */
export const LEDGER_ENV = Object.freeze({ databaseUrl: 'MYR_GATEWAY_DATABASE_URL', table: 'MYR_GATEWAY_LEDGER_TABLE' });

/** The database a URL names: its driver's package, and the client built on it. */
type Opened = { readonly client: SqlClient<unknown>; readonly close: () => Promise<void> };

/** The URL as it may be printed: its password replaced. */
function masked(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.password !== '') parsed.password = '***';
    return parsed.href;
  } catch {
    return url.replace(/\/\/[^@/]*@/, '//***@');
  }
}

function open(url: string, cwd: string): Opened {
  const load = createRequire(join(cwd, 'package.json'));
  const driver = (name: string): unknown => {
    try {
      return load(name);
    } catch {
      throw new ConfigurationError(
        `${LEDGER_ENV.databaseUrl} names a database whose driver is not installed in this project: npm install ${name.split('/')[0] ?? name}`,
        'databaseUrl',
      );
    }
  };
  if (/^postgres(ql)?:\/\//.test(url)) {
    const { Pool } = driver('pg') as {
      Pool: new (options: { connectionString: string; max: number }) => PgPoolLike & { end(): Promise<void> };
    };
    const pool = new Pool({ connectionString: url, max: 1 });
    return { client: fromPg(pool), close: () => pool.end() };
  }
  if (/^(mysql|mariadb):\/\//.test(url)) {
    const { createPool } = driver('mysql2/promise') as {
      createPool: (url: string) => Mysql2PoolLike & { end(): Promise<void> };
    };
    const pool = createPool(url.replace(/^mariadb:/, 'mysql:'));
    return { client: fromMysql2(pool), close: () => pool.end() };
  }
  const path = url.replace(/^sqlite:(\/\/)?/, '');
  // Opening a file that is not there would create it: the doctor changes nothing.
  if (!existsSync(path))
    throw new ConfigurationError(
      `${LEDGER_ENV.databaseUrl} names no SQLite file that exists (${path}); give a postgres:// or mysql:// URL, or the path of the ledger's SQLite file`,
      'databaseUrl',
    );
  const client = fromSqlite(path);
  return { client, close: () => Promise.resolve() };
}

/**
 * Checks the ledger's table in the database `MYR_GATEWAY_DATABASE_URL` names (the table:
 * `MYR_GATEWAY_LEDGER_TABLE`, default `myr_webhook_ledger`); undefined when no URL is set. A
 * `postgres://` URL uses the project's `pg`, `mysql://` (or `mariadb://`) its `mysql2`, anything
 * else is a SQLite file. The URL's password is never printed.
 *
 * @example
 * ```ts
 * await checkLedgerTable({ MYR_GATEWAY_DATABASE_URL: 'postgres://shop@db/shop' }); // { name: 'ledger table', outcome: 'ok', … }
 * ```
 */
export async function checkLedgerTable(env: Environment, cwd = process.cwd()): Promise<CheckResult | undefined> {
  const url = env[LEDGER_ENV.databaseUrl]?.trim();
  if (url === undefined || url === '') return undefined;
  const table = env[LEDGER_ENV.table]?.trim() || 'myr_webhook_ledger';
  const hide = (text: string) => {
    const password = URL.canParse(url) ? decodeURIComponent(new URL(url).password) : '';
    return (password === '' ? text : text.replaceAll(password, '***')).replaceAll(url, masked(url));
  };
  let opened: Opened | undefined;
  try {
    opened = open(url, cwd);
    await new SqlLedger(opened.client, { table }).ensureSchema({ create: false });
    return { name: 'ledger table', outcome: 'ok', detail: `${table} in ${masked(url)} is the table the ledger needs` };
  } catch (error) {
    const what =
      error instanceof ConfigurationError
        ? error.message
        : `the database did not answer the check: ${error instanceof Error ? error.message : String(error)}`;
    return { name: 'ledger table', outcome: 'fail', detail: hide(what) };
  } finally {
    await opened?.close().catch(() => undefined);
  }
}
