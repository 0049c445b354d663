/**
 * `drizzle-kit push` against a real MariaDB, on a shop whose callbacks run on the SQL ledger.
 * drizzle-kit (0.31) reads MariaDB's column types as changed on every push (its display widths,
 * `smallint(6)`, and the ledger key's binary collation), and with `--force` answers a "type
 * change" on a table with rows by TRUNCATE: with `mysqlLedgerTable()` in the schema, every push
 * empties the ledger (a resend of a handled payment is then fulfilled again). What holds on
 * MariaDB is to keep the ledger out of drizzle-kit's reach: `tablesFilter` excludes it (and it is
 * not in the schema), so push neither drops nor alters it, and `ensureSchema()` (or a migration
 * of `schemaSql()`) owns it. docs/ledger.md says so.
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, resolve } from 'node:path';
import mysql from 'mysql2/promise';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fromMysql2, SqlLedger } from '../../../../src/sql/index.js';
import { MariadbServer } from '../../../helpers/mariadb.js';

const ROOT = resolve(import.meta.dirname, '../../../..');
const project = join(ROOT, '.tmp', `drizzle-kit-push-mariadb-${process.pid}`);
let server: MariadbServer;

const ORDERS =
  "export const orders = mysqlTable('orders', { reference_id: varchar('reference_id', { length: 64 }).primaryKey() });";

beforeAll(async () => {
  server = await MariadbServer.start();
  mkdirSync(project, { recursive: true });
}, 60_000);
afterAll(async () => {
  await server?.stop();
  rmSync(project, { recursive: true, force: true });
});

/** A database of its own and a pool on it. */
async function shopDatabase(name: string): Promise<mysql.Pool> {
  const { host, port, user } = server.options;
  const admin = await mysql.createConnection({ host, port, user });
  await admin.query(`CREATE DATABASE ${name}`);
  await admin.end();
  return mysql.createPool({ ...server.options, database: name, connectionLimit: 4 });
}

/** Runs `drizzle-kit push --force` on `schema` with `config` (more of drizzle.config.ts); answers what it printed. */
function push(database: string, schema: string, config = ''): string {
  const dir = join(project, database);
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'schema.ts'), schema);
  const url = `mysql://root@127.0.0.1:${server.port}/${database}`;
  writeFileSync(
    join(dir, 'drizzle.config.ts'),
    `export default { dialect: 'mysql', schema: ${JSON.stringify(join(dir, 'schema.ts'))}, dbCredentials: { url: ${JSON.stringify(url)} }${config} };\n`,
  );
  const bin = join(dirname(createRequire(join(dir, 'package.json')).resolve('drizzle-kit')), 'bin.cjs');
  const run = (): string => {
    try {
      return execFileSync(
        process.execPath,
        [bin, 'push', '--force', '--verbose', '--config', join(dir, 'drizzle.config.ts')],
        {
          cwd: dir,
          encoding: 'utf8',
          stdio: 'pipe',
        },
      );
    } catch (error) {
      // drizzle-kit exits 1 after statements it already ran (MariaDB refuses its ADD PRIMARY KEY).
      const { stdout, stderr } = error as { stdout?: string; stderr?: string };
      return `${stdout ?? ''}${stderr ?? ''}`;
    }
  };
  return run();
}

/** Handles `payments`' SUCCESS through the ledger; answers the ledger. */
async function handled(pool: mysql.Pool, payments: readonly string[]) {
  const ledger = new SqlLedger(fromMysql2(pool));
  await ledger.ensureSchema();
  for (const payment of payments) {
    const run = await ledger.run(`payment:${payment}:SUCCESS`, () => undefined, {
      raiseMark: false,
      completedTtlMs: 86_400_000,
      order: { paymentId: payment, rank: 1 },
    });
    expect(run.outcome).toBe('processed');
  }
  return ledger;
}

const rows = async (pool: mysql.Pool) => {
  const [found] = await pool.query<mysql.RowDataPacket[]>('SELECT count(*) AS n FROM myr_webhook_ledger');
  return Number(found[0]?.n);
};
const payments = ['PAY_PUSH_1', 'PAY_PUSH_2'];

describe('drizzle-kit push on a shop using the SQL ledger (real MariaDB)', () => {
  it('with mysqlLedgerTable() in the schema, push truncates the ledger: why docs/ledger.md keeps it out on MariaDB', async () => {
    const pool = await shopDatabase('shop_in_schema');
    await handled(pool, payments);
    const schema = [
      "import { mysqlTable, varchar } from 'drizzle-orm/mysql-core';",
      `import { mysqlLedgerTable } from ${JSON.stringify(join(ROOT, 'src/drizzle/index.ts'))};`,
      ORDERS,
      'export const myrWebhookLedger = mysqlLedgerTable();',
      '',
    ].join('\n');
    expect(push('shop_in_schema', schema)).toMatch(/truncate table myr_webhook_ledger/i);
    expect(await rows(pool)).toBe(0);
    await pool.end();
  }, 60_000);

  it('kept out with tablesFilter (and not in the schema), push neither drops nor alters it: the rows survive and a resend is a duplicate', async () => {
    const pool = await shopDatabase('shop_filtered');
    const ledger = await handled(pool, payments);
    const before = await rows(pool);
    expect(before).toBeGreaterThanOrEqual(payments.length);
    const schema = ["import { mysqlTable, varchar } from 'drizzle-orm/mysql-core';", ORDERS, ''].join('\n');
    const printed = push('shop_filtered', schema, ", tablesFilter: ['!myr_webhook_ledger']");
    expect(printed).not.toMatch(/myr_webhook_ledger/);
    expect(await rows(pool)).toBe(before);
    await ledger.ensureSchema({ create: false });
    const resend = await ledger.run('payment:PAY_PUSH_2:SUCCESS', () => undefined, {
      raiseMark: false,
      completedTtlMs: 86_400_000,
      order: { paymentId: 'PAY_PUSH_2', rank: 1 },
    });
    expect(resend.outcome).toBe('duplicate');
    await pool.end();
  }, 60_000);
});
