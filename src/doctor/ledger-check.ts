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

/**
 * The URL as it may be printed: where the database is (scheme, user, host, port, database) and
 * nothing else. Not its password, nor its query: node-postgres and mysql2 take a password from
 * `?password=` too, and other parameters carry keys and tokens. A SQLite file's path is printed
 * as it is.
 */
function shown(url: string): string {
  if (!/^[a-z][a-z0-9+.-]*:\/\//i.test(url)) return url;
  try {
    const { protocol, username, host, pathname } = new URL(url);
    return `${protocol}//${username === '' ? '' : `${username}@`}${host}${pathname}`;
  } catch {
    return url.replace(/\/\/[^@/]*@/, '//***@').replace(/[?#][^]*$/, '');
  }
}

/** A query parameter whose name says its value is a secret (`password`, `sslpassword`, `pwd`, a token, a key). */
const SECRET_PARAMETER = /pass|pwd|secret|token|key|auth|cred/i;

/** The secrets of `url` a driver's message may quote: its password, and each secret query parameter's value, as written and decoded. */
function secretsOf(url: string): string[] {
  if (!URL.canParse(url)) return [];
  const parsed = new URL(url);
  const secrets = [parsed.password];
  try {
    secrets.push(decodeURIComponent(parsed.password));
  } catch {
    // Not valid percent-encoding: the driver reads it as written, which is already in the list.
  }
  for (const [name, value] of parsed.searchParams) if (SECRET_PARAMETER.test(name)) secrets.push(value);
  return secrets.filter((secret) => secret !== '');
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
 * else is a SQLite file. Of the URL only scheme, user, host, port and database are printed: never
 * its password, nor its query (`?password=` is a password to node-postgres and mysql2).
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
  // The URL first, whole: once a secret in it is masked it no longer matches.
  const hide = (text: string) =>
    secretsOf(url).reduce((hidden, secret) => hidden.replaceAll(secret, '***'), text.replaceAll(url, shown(url)));
  let opened: Opened | undefined;
  try {
    opened = open(url, cwd);
    await new SqlLedger(opened.client, { table }).ensureSchema({ create: false });
    return { name: 'ledger table', outcome: 'ok', detail: `${table} in ${shown(url)} is the table the ledger needs` };
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
