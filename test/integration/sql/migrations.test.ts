/**
 * The ledger's table as a merchant's migration tool makes it, on real PostgreSQL, MariaDB and
 * SQLite: the migration files shipped in docs/migrations/ (for Kysely or plain SQL), and the
 * Drizzle tables of `myr-gateway/drizzle` as `drizzle-kit generate` writes them. Each is compared,
 * in the database's own catalog, with the table `SqlLedger.schemaSql(dialect)` makes: every column
 * and index of it, the same (a column the ledger's statements never name must take a default),
 * and the ledger runs on the migrated table (a callback processed once, its resend a duplicate).
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, resolve } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import mysql from 'mysql2/promise';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fromMysql2, fromPg, fromSqlite, SqlLedger, type SqlClient, type SqlDialect } from '../../../src/sql/index.js';
import { MariadbServer } from '../../helpers/mariadb.js';
import { PostgresServer } from '../../helpers/postgres.js';

const ROOT = resolve(import.meta.dirname, '../../..');
const work = join(ROOT, '.tmp', `ledger-migrations-${process.pid}`);
let postgres: PostgresServer;
let mariadb: MariadbServer;

beforeAll(async () => {
  mkdirSync(work, { recursive: true });
  [postgres, mariadb] = await Promise.all([PostgresServer.start(), MariadbServer.start()]);
}, 120_000);
afterAll(async () => {
  await Promise.all([postgres?.destroy(), mariadb?.destroy()]);
  rmSync(work, { recursive: true, force: true });
});

/** A column as the catalog states it: its name, then everything that decides what it holds. */
type Column = [name: string, shape: string];
interface Catalog {
  columns: Column[];
  indexes: string[];
}

/** One database of a dialect: run DDL in it, read its catalog, give the ledger a client on it. */
interface Database {
  exec(ddl: string): Promise<void>;
  catalog(): Promise<Catalog>;
  client(): SqlClient<unknown>;
  close(): Promise<void>;
}

/** Splits a migration (comments dropped) into its statements. */
function statementsOf(sql: string): string[] {
  return sql
    .split('\n')
    .filter((line) => !line.startsWith('--'))
    .join('\n')
    .split(/;\s*(?:\n|$)|--> statement-breakpoint/)
    .map((statement) => statement.trim())
    .filter((statement) => statement !== '');
}

async function sqliteDatabase(name: string): Promise<Database> {
  const file = join(work, `${name}.db`);
  const db = new DatabaseSync(file);
  return {
    exec: async (ddl) => void db.exec(ddl),
    catalog: async () => ({
      columns: db
        .prepare('PRAGMA table_info(myr_webhook_ledger)')
        .all()
        .map((c): Column => [
          String(c.name),
          `${String(c.type)} notnull=${String(c.notnull)} default=${String(c.dflt_value)} pk=${String(c.pk)}`,
        ]),
      indexes: db
        .prepare(
          "SELECT name, sql FROM sqlite_master WHERE type = 'index' AND tbl_name = 'myr_webhook_ledger' AND sql IS NOT NULL",
        )
        .all()
        .map(
          (i) =>
            `${String(i.name)} (${db
              .prepare(`PRAGMA index_info(${String(i.name)})`)
              .all()
              .map((c) => String(c.name))
              .join(', ')})`,
        ),
    }),
    client: () => fromSqlite(file),
    close: async () => db.close(),
  };
}

async function postgresDatabase(name: string): Promise<Database> {
  const admin = new pg.Client({ connectionString: postgres.url });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${name}`);
  await admin.end();
  const pool = new pg.Pool({ connectionString: postgres.url.replace(/\/postgres$/, `/${name}`), max: 4 });
  return {
    exec: async (ddl) => void (await pool.query(ddl)),
    catalog: async () => ({
      columns: (
        await pool.query<{
          column_name: string;
          data_type: string;
          len: number | null;
          is_nullable: string;
          column_default: string | null;
        }>(
          "SELECT column_name, data_type, character_maximum_length AS len, is_nullable, column_default FROM information_schema.columns WHERE table_name = 'myr_webhook_ledger'",
        )
      ).rows.map((c): Column => [
        c.column_name,
        `${c.data_type}(${String(c.len)}) nullable=${c.is_nullable} default=${String(c.column_default)}`,
      ]),
      indexes: (
        await pool.query<{ indexdef: string }>("SELECT indexdef FROM pg_indexes WHERE tablename = 'myr_webhook_ledger'")
      ).rows.map((i) => i.indexdef),
    }),
    client: () => fromPg(pool),
    close: () => pool.end(),
  };
}

async function mysqlDatabase(name: string): Promise<Database> {
  const { host, port, user } = mariadb.options;
  const admin = await mysql.createConnection({ host, port, user });
  await admin.query(`CREATE DATABASE ${name}`);
  await admin.end();
  const pool = mysql.createPool({ host, port, user, database: name, connectionLimit: 4 });
  return {
    exec: async (ddl) => void (await pool.query(ddl)),
    catalog: async () => {
      const [columns] = await pool.query<mysql.RowDataPacket[]>(
        "SELECT COLUMN_NAME AS name, COLUMN_TYPE AS type, IS_NULLABLE AS nullable, COLUMN_DEFAULT AS dflt, COLLATION_NAME AS coll, COLUMN_KEY AS k FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = ? AND TABLE_NAME = 'myr_webhook_ledger'",
        [name],
      );
      const [indexes] = await pool.query<mysql.RowDataPacket[]>(
        "SELECT INDEX_NAME AS name, GROUP_CONCAT(COLUMN_NAME ORDER BY SEQ_IN_INDEX) AS cols FROM information_schema.STATISTICS WHERE TABLE_SCHEMA = ? AND TABLE_NAME = 'myr_webhook_ledger' GROUP BY INDEX_NAME",
        [name],
      );
      return {
        columns: columns.map((c): Column => [
          String(c.name),
          `${String(c.type)} nullable=${String(c.nullable)} default=${String(c.dflt)} collation=${String(c.coll)} key=${String(c.k)}`,
        ]),
        indexes: indexes.map((i) => `${String(i.name)} (${String(i.cols)})`),
      };
    },
    client: () => fromMysql2(pool),
    close: () => pool.end(),
  };
}

/** The SQL `drizzle-kit generate` writes for the ledger's Drizzle table of `dialect` (offline: no database). */
function drizzleGenerated(dialect: SqlDialect): string {
  const dir = join(work, `drizzle-${dialect}`);
  mkdirSync(dir, { recursive: true });
  const table = { postgres: 'pgLedgerTable', mysql: 'mysqlLedgerTable', sqlite: 'sqliteLedgerTable' }[dialect];
  writeFileSync(
    join(dir, 'schema.ts'),
    `import { ${table} } from ${JSON.stringify(join(ROOT, 'src/drizzle/index.ts'))};\nexport const myrWebhookLedger = ${table}();\n`,
  );
  const kitDialect = { postgres: 'postgresql', mysql: 'mysql', sqlite: 'sqlite' }[dialect];
  writeFileSync(
    join(dir, 'drizzle.config.ts'),
    `export default { dialect: '${kitDialect}', schema: ${JSON.stringify(join(dir, 'schema.ts'))}, out: ${JSON.stringify(join(dir, 'out'))} };\n`,
  );
  const bin = join(dirname(createRequire(join(dir, 'package.json')).resolve('drizzle-kit')), 'bin.cjs');
  execFileSync(process.execPath, [bin, 'generate', '--config', join(dir, 'drizzle.config.ts')], {
    cwd: dir,
    stdio: 'pipe',
  });
  const file = readdirSync(join(dir, 'out')).find((name) => name.endsWith('.sql'));
  if (file === undefined) throw new Error('drizzle-kit generate wrote no migration');
  return readFileSync(join(dir, 'out', file), 'utf8');
}

const databases: [SqlDialect, (name: string) => Promise<Database>][] = [
  ['postgres', postgresDatabase],
  ['mysql', mysqlDatabase],
  ['sqlite', sqliteDatabase],
];

describe.each(databases)('the ledger table on %s', (dialect, open) => {
  /** The table schemaSql makes, in the database's own words. */
  let expected: Catalog;
  beforeAll(async () => {
    const db = await open(`from_schema_sql_${dialect}`);
    for (const statement of statementsOf(new SqlLedger(db.client()).schemaSql(dialect))) await db.exec(statement);
    expected = await db.catalog();
    await db.close();
  }, 60_000);

  /** `actual` has every column and index of `expected`, as it states them; its other columns take a default. */
  const expectSameTable = (actual: Catalog) => {
    expect(expected.columns.length).toBeGreaterThanOrEqual(5);
    expect([...actual.columns].sort()).toEqual([...expected.columns].sort());
    expect([...actual.indexes].sort()).toEqual([...expected.indexes].sort());
  };

  it(`docs/migrations/${dialect}.sql makes the table schemaSql makes, and the ledger runs on it`, async () => {
    const db = await open(`from_file_${dialect}`);
    for (const statement of statementsOf(readFileSync(join(ROOT, 'docs/migrations', `${dialect}.sql`), 'utf8')))
      await db.exec(statement);
    expectSameTable(await db.catalog());
    const ledger = new SqlLedger(db.client());
    const fulfilled: string[] = [];
    const run = () =>
      ledger.run('payment:PAY_MIG_1:SUCCESS', () => void fulfilled.push('PAY_MIG_1'), {
        raiseMark: false,
        completedTtlMs: 86_400_000,
        order: { paymentId: 'PAY_MIG_1', rank: 1 },
      });
    expect((await run()).outcome).toBe('processed');
    expect((await run()).outcome).toBe('duplicate');
    expect(fulfilled).toEqual(['PAY_MIG_1']);
    await db.close();
  }, 60_000);

  it(`drizzle-kit generate on the Drizzle table of myr-gateway/drizzle makes the same table as docs/migrations/${dialect}.sql`, async () => {
    const fromFile = await open(`file_for_drizzle_${dialect}`);
    for (const statement of statementsOf(readFileSync(join(ROOT, 'docs/migrations', `${dialect}.sql`), 'utf8')))
      await fromFile.exec(statement);
    const fromDrizzle = await open(`from_drizzle_${dialect}`);
    for (const statement of statementsOf(drizzleGenerated(dialect))) await fromDrizzle.exec(statement);
    // Column for column, NOT NULL included (SQLite's key too: else drizzle-kit push rebuilds the table by copy).
    const drizzle = await fromDrizzle.catalog();
    expect(drizzle).toEqual(await fromFile.catalog());
    expectSameTable(drizzle);
    await Promise.all([fromFile.close(), fromDrizzle.close()]);
  }, 60_000);
});
