/**
 * The payout outbox's tables when the merchant's own tools own them, on real PostgreSQL, MariaDB
 * and SQLite: `ensureSchema({ create: false })` checks the tables a migration made and creates
 * nothing (so a role that may not CREATE can run it), and `ensureSchema()` refuses a table that
 * differs (no `refusal` column, a `claim_id` that cannot hold a 53-bit claim id), naming the
 * statement that fixes it, before `stage` commits a merchant's debit beside a payout every drain
 * would then fail to write.
 */
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import mysql from 'mysql2/promise';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConfigurationError } from '../../../../src/index.js';
import { SqlPayouts, fromMysql2, fromPg, fromSqlite, type SqlClient } from '../../../../src/sql/index.js';
import { mariadbForFile, postgresForFile } from '../../../helpers/database-for-file.js';
import { migrate, refusal, statementsOf } from '../../../helpers/schema-migration.js';

const pgDb = postgresForFile(4);
const mariaDb = mariadbForFile({ connectionLimit: 4 });
let dir: string;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'myr-payouts-schema-'));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const hooks = { onRefused: () => undefined, onSettled: () => undefined };
const fresh = () => `payouts_${randomUUID().replaceAll('-', '').slice(0, 12)}`;

/** Whether `table` exists, asked in the dialect's catalog. */
async function exists<Tx>(client: SqlClient<Tx>, table: string): Promise<boolean> {
  const ask = {
    postgres: 'SELECT count(*) AS found FROM pg_tables WHERE schemaname = current_schema() AND tablename = $1',
    mysql: 'SELECT count(*) AS found FROM information_schema.TABLES WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = ?',
    sqlite: "SELECT count(*) AS found FROM sqlite_master WHERE type = 'table' AND name = ?",
  }[client.dialect];
  const session = await client.begin(5_000);
  const { rows } = await session.query(ask, [table]);
  await session.commit(undefined);
  return Number(rows[0]?.found) > 0;
}

/** Each database, and the claim_id there that cannot hold a claim's id. */
const databases: Record<string, { client: () => SqlClient<unknown>; smallClaimId: string; smallType: RegExp }> = {
  'node-postgres': {
    client: () => fromPg(pgDb.pool),
    smallClaimId: 'INTEGER',
    smallType: /claim_id is integer, not bigint/,
  },
  'mysql2 (MariaDB)': {
    client: () => fromMysql2(mariaDb.pool),
    smallClaimId: 'INT NULL',
    smallType: /claim_id is int, not bigint/,
  },
  // SQLite stores every whole-number type in 64 bits: the claim_id that cannot hold its id is one of another type.
  'node:sqlite': {
    client: () => fromSqlite(join(dir, 'shop.db')),
    smallClaimId: 'TEXT',
    smallType: /claim_id is text, not integer or int or bigint or smallint/,
  },
};

describe.each(Object.entries(databases))(
  'SqlPayouts.ensureSchema on %s',
  (_name, { client, smallClaimId, smallType }) => {
    it('create: false on missing tables refuses, naming the statements that create them, and creates nothing', async () => {
      const table = fresh();
      const payouts = new SqlPayouts(client(), { ...hooks, table });
      const refused = await refusal(payouts.ensureSchema({ create: false }));
      expect(refused).toBeInstanceOf(ConfigurationError);
      expect(refused).toMatchObject({
        field: 'table',
        message: expect.stringContaining(`the payout outbox's tables ${table} and ${table}_pace do not exist`),
      });
      expect((refused as Error).message).toContain(`create them with CREATE TABLE IF NOT EXISTS ${table} (`);
      expect(await exists(client(), table)).toBe(false);
      expect(await exists(client(), `${table}_pace`)).toBe(false);
    });

    it('create: false passes on the tables a migration made from schemaSql, and on those ensureSchema() made', async () => {
      const migrated = fresh();
      const byMigration = new SqlPayouts(client(), { ...hooks, table: migrated });
      expect(await refusal(byMigration.ensureSchema({ create: false }))).toBeInstanceOf(ConfigurationError);
      for (const statement of statementsOf(byMigration.schemaSql())) await migrate(client(), statement);
      await byMigration.ensureSchema({ create: false });

      const made = new SqlPayouts(client(), { ...hooks, table: fresh() });
      await made.ensureSchema();
      await made.ensureSchema({ create: false });
    });

    it("a migration that left out the pace table's row: refused, naming the INSERT (workers lock that row to share the limit); added, it passes", async () => {
      const table = fresh();
      const payouts = new SqlPayouts(client(), { ...hooks, table });
      const statements = statementsOf(payouts.schemaSql());
      const insert = statements.find((statement) => statement.startsWith('INSERT'));
      expect(insert).toBeDefined();
      for (const statement of statements) if (statement !== insert) await migrate(client(), statement);
      const refused = await refusal(payouts.ensureSchema({ create: false }));
      expect(refused).toBeInstanceOf(ConfigurationError);
      expect((refused as Error).message).toContain(`${table}_pace has no row 1`);
      expect((refused as Error).message).toContain(`${insert ?? ''};`);
      await migrate(client(), insert ?? '');
      await payouts.ensureSchema({ create: false });
    });

    it('a table without refusal: refused, naming the column and the ADD COLUMN that fixes it; fixed, it passes', async () => {
      const table = fresh();
      const payouts = new SqlPayouts(client(), { ...hooks, table });
      for (const statement of statementsOf(payouts.schemaSql()))
        await migrate(client(), statement.replace(/refusal TEXT( NULL)?, /, ''));
      const refused = await refusal(payouts.ensureSchema());
      expect(refused).toBeInstanceOf(ConfigurationError);
      const message = (refused as Error).message;
      expect(message).toContain(
        `the payout outbox's table ${table} is not the table the payout outbox needs: refusal is missing.`,
      );
      const fix = `ALTER TABLE ${table} ADD COLUMN refusal TEXT`;
      expect(message).toContain(`Fix it with: ${fix};`);
      await migrate(client(), fix);
      await payouts.ensureSchema({ create: false });
    });

    it("a table without requested_at, its index then made by ensureSchema(): refused, naming the column and the ADD COLUMN, not the index's error", async () => {
      const table = fresh();
      const payouts = new SqlPayouts(client(), { ...hooks, table });
      // An older migration: no pace table yet, and no requested_at (MySQL's index is in its CREATE
      // TABLE; the others' is a CREATE INDEX of its own, which ensureSchema's DDL then fails on).
      for (const statement of statementsOf(payouts.schemaSql()).filter(
        (text) => !/^CREATE INDEX.*\(requested_at\)/.test(text) && !text.includes(`${table}_pace`),
      ))
        await migrate(
          client(),
          statement.replace(', INDEX requested_idx (requested_at)', '').replace(/,\s*requested_at \w+( NULL)?/, ''),
        );
      const refused = await refusal(payouts.ensureSchema());
      expect(refused).toBeInstanceOf(ConfigurationError);
      const message = (refused as Error).message;
      expect(message).toContain('requested_at is missing');
      expect(message).toContain(`ALTER TABLE ${table} ADD COLUMN requested_at`);
    });

    it('a claim_id too small for a 53-bit claim id: refused, naming it and the statement that fixes it', async () => {
      const table = fresh();
      const payouts = new SqlPayouts(client(), { ...hooks, table });
      for (const statement of statementsOf(payouts.schemaSql()))
        await migrate(client(), statement.replace(/claim_id (BIGINT|INTEGER)( NULL)?,/, `claim_id ${smallClaimId},`));
      const refused = await refusal(payouts.ensureSchema({ create: false }));
      expect(refused).toBeInstanceOf(ConfigurationError);
      const message = (refused as Error).message;
      expect(message).toMatch(smallType);
      if (client().dialect === 'sqlite') {
        // SQLite cannot change a column: the fix is the table to copy the rows into.
        expect(message).toContain(`a new table (SQLite cannot change a column): CREATE TABLE ${table} (`);
        return;
      }
      const fix = message.slice(message.indexOf('Fix it with: ') + 'Fix it with: '.length).replace(/;$/, '');
      expect(fix).toMatch(
        new RegExp(`^ALTER TABLE ${table} (MODIFY COLUMN|ALTER COLUMN) claim_id (BIGINT|TYPE BIGINT)`),
      );
      await migrate(client(), fix);
      await payouts.ensureSchema({ create: false });
    });

    it('a create that is not a boolean is a ConfigurationError, and creates nothing', async () => {
      const table = fresh();
      const payouts = new SqlPayouts(client(), { ...hooks, table });
      // @ts-expect-error: create is a boolean
      const refused = await refusal(payouts.ensureSchema({ create: 'no' }));
      expect(refused).toBeInstanceOf(ConfigurationError);
      expect(refused).toMatchObject({ field: 'create' });
      expect(await exists(client(), table)).toBe(false);
    });
  },
);

/** The statements after `Fix it with: ` in a refusal (one table's). */
const fixesOf = (message: string) =>
  message
    .slice(message.indexOf('Fix it with: ') + 'Fix it with: '.length)
    .split(';')
    .map((text) => text.trim())
    .filter(Boolean);

describe.each(Object.entries(databases).filter(([name]) => name !== 'node:sqlite'))(
  'the fixes a refusal names run as written, on %s',
  (_name, { client }) => {
    it('a reference_id (the primary key) shorter than the 100 characters the service accepts', async () => {
      const table = fresh();
      const payouts = new SqlPayouts(client(), { ...hooks, table });
      for (const statement of statementsOf(payouts.schemaSql()))
        await migrate(client(), statement.replace('reference_id VARCHAR(100)', 'reference_id VARCHAR(64)'));
      const refused = await refusal(payouts.ensureSchema({ create: false }));
      expect(refused).toBeInstanceOf(ConfigurationError);
      const message = (refused as Error).message;
      expect(message).toContain('reference_id holds 64 characters, fewer than the 100 written into it');
      for (const fix of fixesOf(message)) await migrate(client(), fix);
      await payouts.ensureSchema({ create: false });
    });

    it('a last_error made NOT NULL (the outbox writes NULL there: a sent payout has none)', async () => {
      const table = fresh();
      const payouts = new SqlPayouts(client(), { ...hooks, table });
      for (const statement of statementsOf(payouts.schemaSql()))
        await migrate(
          client(),
          statement.replace(/last_error VARCHAR\(500\)( NULL)?/, 'last_error VARCHAR(500) NOT NULL'),
        );
      const refused = await refusal(payouts.ensureSchema({ create: false }));
      expect(refused).toBeInstanceOf(ConfigurationError);
      const message = (refused as Error).message;
      expect(message).toContain('last_error is NOT NULL, but NULL is written into it');
      for (const fix of fixesOf(message)) await migrate(client(), fix);
      await payouts.ensureSchema({ create: false });
    });

    it('a pace table whose id is not its primary key', async () => {
      const table = fresh();
      const payouts = new SqlPayouts(client(), { ...hooks, table });
      for (const statement of statementsOf(payouts.schemaSql()).filter((text) => !text.includes(`${table}_pace`)))
        await migrate(client(), statement);
      await migrate(client(), `CREATE TABLE ${table}_pace (id INTEGER NOT NULL)`);
      await migrate(client(), `INSERT INTO ${table}_pace (id) VALUES (1)`);
      const refused = await refusal(payouts.ensureSchema({ create: false }));
      expect(refused).toBeInstanceOf(ConfigurationError);
      const message = (refused as Error).message;
      expect(message).toContain(
        `the payout outbox's table ${table}_pace is not the table the payout outbox needs: id is not the primary key`,
      );
      for (const fix of fixesOf(message)) await migrate(client(), fix);
      await payouts.ensureSchema({ create: false });
    });
  },
);

describe('a role that may not create tables checks the tables a migration made with create: false', () => {
  it('PostgreSQL 15: a role with no CREATE on the schema', async () => {
    const table = fresh();
    const role = `app_${table}`;
    const admin = new SqlPayouts(fromPg(pgDb.pool), { ...hooks, table });
    for (const statement of statementsOf(admin.schemaSql())) await pgDb.pool.query(statement);
    await pgDb.pool.query(`CREATE ROLE ${role} LOGIN`);
    await pgDb.pool.query(`REVOKE CREATE ON SCHEMA public FROM PUBLIC`);
    await pgDb.pool.query(`GRANT SELECT, INSERT, UPDATE, DELETE ON ${table}, ${table}_pace TO ${role}`);
    const pool = new pg.Pool({ connectionString: pgDb.server.url.replace('postgres@', `${role}@`), max: 1 });
    try {
      const payouts = new SqlPayouts(fromPg(pool), { ...hooks, table });
      await payouts.ensureSchema({ create: false });
      await expect(payouts.ensureSchema()).rejects.toMatchObject({ code: '42501' });
    } finally {
      await pool.end();
    }
  });

  it('MariaDB: a user granted only SELECT, INSERT, UPDATE and DELETE on the two tables', async () => {
    const table = fresh();
    const user = `app_${table}`.slice(0, 32);
    const admin = new SqlPayouts(fromMysql2(mariaDb.pool), { ...hooks, table });
    for (const statement of statementsOf(admin.schemaSql())) await mariaDb.pool.query(statement);
    const { database } = mariaDb.server.options;
    await mariaDb.pool.query(`CREATE USER '${user}'@'%'`);
    for (const name of [table, `${table}_pace`])
      await mariaDb.pool.query(`GRANT SELECT, INSERT, UPDATE, DELETE ON ${database}.${name} TO '${user}'@'%'`);
    const pool = mysql.createPool({ ...mariaDb.server.options, user, connectionLimit: 1 });
    try {
      const payouts = new SqlPayouts(fromMysql2(pool), { ...hooks, table });
      await payouts.ensureSchema({ create: false });
      await expect(payouts.ensureSchema()).rejects.toMatchObject({ errno: 1142 });
    } finally {
      await pool.end();
    }
  });
});
