/**
 * What `ensureSchema` refuses in the ledger's key, on real Postgres, MariaDB and SQLite: each
 * table here was accepted before and then lost or blocked callbacks. A key that ignores case
 * (SQLite `COLLATE NOCASE`, a non-deterministic ICU collation on Postgres) made `PAY_AB12` and
 * `PAY_ab12` one payment: the second's SUCCESS a duplicate, never run. A key too short for the
 * longest key the ledger writes (255 characters) made every callback 503 on Postgres (SQLite
 * ignores a declared length: any text is accepted there). SQLite's key is made NOT NULL, as
 * Drizzle's table has it, and a table made before without it still runs. A primary key of more than
 * the key left the ledger's `ON CONFLICT (ledger_key)` without a constraint (503 on every
 * callback on Postgres and SQLite; on MySQL a key unique only with its expiry). Each refusal
 * names the statement that fixes it, and the fixed table runs.
 */
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConfigurationError } from '../../../src/index.js';
import { SqlLedger, SqlPayouts, fromMysql2, fromPg, fromSqlite, type SqlClient } from '../../../src/sql/index.js';
import { mariadbForFile, postgresForFile } from '../../helpers/database-for-file.js';
import { refusal } from '../../helpers/schema-migration.js';

const pgDb = postgresForFile(4);
const mariaDb = mariadbForFile({ connectionLimit: 4 });
let dir: string;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'myr-schema-key-'));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const fresh = () => `ledger_${randomUUID().replaceAll('-', '').slice(0, 12)}`;
const sqliteFile = () => join(dir, 'shop.db');
/** Runs `statement` on the merchant's own connection, as a migration would. */
const onSqlite = (statement: string) => {
  const db = new DatabaseSync(sqliteFile());
  db.exec(statement);
  db.close();
};

/** The statements after "Fix it with: " in a refusal. */
const fixesOf = (error: unknown): string[] => {
  const message = (error as Error).message;
  return message
    .slice(message.indexOf('Fix it with: ') + 'Fix it with: '.length)
    .split(';')
    .map((text) => text.trim())
    .filter(Boolean);
};

/** Which of the payments' SUCCESS callbacks ran, one after the other. */
async function ran(ledger: SqlLedger<unknown>, payments: readonly string[]): Promise<string[]> {
  const processed: string[] = [];
  for (const payment of payments) {
    const options = { raiseMark: false, completedTtlMs: 86_400_000, order: { paymentId: payment, rank: 1 } };
    if ((await ledger.run(`payment:${payment}:SUCCESS`, () => undefined, options)).outcome === 'processed')
      processed.push(payment);
  }
  return processed;
}

const ROW =
  'mark_rank SMALLINT, handled_statuses SMALLINT NOT NULL DEFAULT 0, expires_at BIGINT NOT NULL, claim_id BIGINT';

describe('a key that ignores case', () => {
  it('SQLite (COLLATE NOCASE) is refused, by ensureSchema with or without create, naming BINARY and the table to make instead', async () => {
    const table = fresh();
    onSqlite(`CREATE TABLE ${table} (ledger_key TEXT COLLATE NOCASE PRIMARY KEY, ${ROW})`);
    const ledger = new SqlLedger(fromSqlite(sqliteFile()), { table });
    const refused = await refusal(ledger.ensureSchema({ create: false }));
    expect(refused).toBeInstanceOf(ConfigurationError);
    expect((refused as Error).message).toContain(
      'ledger_key compares with the collation NOCASE, which makes keys that differ by case or accent one (it needs BINARY',
    );
    expect((refused as Error).message).toContain(
      `a new table (SQLite cannot change a column): CREATE TABLE ${table} (ledger_key TEXT NOT NULL PRIMARY KEY`,
    );
    expect(await refusal(ledger.ensureSchema())).toBeInstanceOf(ConfigurationError);
  });

  it('Postgres (a non-deterministic ICU collation) is refused with the ALTER that fixes it; fixed, PAY_AB12 and PAY_ab12 are two payments', async () => {
    const table = fresh();
    await pgDb.pool.query(
      "CREATE COLLATION IF NOT EXISTS case_blind (provider = icu, locale = 'und-u-ks-level2', deterministic = false)",
    );
    await pgDb.pool.query(`CREATE TABLE ${table} (ledger_key VARCHAR(255) COLLATE case_blind PRIMARY KEY, ${ROW})`);
    const ledger = new SqlLedger(fromPg(pgDb.pool), { table });
    const refused = await refusal(ledger.ensureSchema({ create: false }));
    expect(refused).toBeInstanceOf(ConfigurationError);
    expect((refused as Error).message).toContain(
      'ledger_key compares with the collation case_blind, which makes keys that differ by case or accent one (it needs a deterministic collation',
    );
    const fixes = fixesOf(refused);
    expect(fixes).toEqual([`ALTER TABLE ${table} ALTER COLUMN ledger_key TYPE VARCHAR(255) COLLATE "default"`]);
    for (const fix of fixes) await pgDb.pool.query(fix);
    await ledger.ensureSchema({ create: false });
    const id = randomUUID().slice(0, 8);
    expect(await ran(ledger, [`PAY_AB12${id}`, `PAY_ab12${id}`])).toEqual([`PAY_AB12${id}`, `PAY_ab12${id}`]);
  });
});

describe("a payouts reference_id that ignores case (PAYOUTab1 and PAYOUTAB1 one payout: the second's debit committed with no payout)", () => {
  const hooks = { onRefused: () => undefined, onSettled: () => undefined };
  const payouts = (client: SqlClient<unknown>, table: string) => new SqlPayouts(client, { ...hooks, table });
  /** The DDL of a payouts table with `collation` on its key. */
  const ddlWith = (outbox: SqlPayouts<unknown>, key: string, collated: string) =>
    outbox
      .schemaSql()
      .split(';')
      .map((text) => text.trim())
      .filter(Boolean)
      .map((text) => text.replace(key, collated));

  it('SQLite (COLLATE NOCASE) is refused, naming BINARY', async () => {
    const table = `payouts_${randomUUID().replaceAll('-', '').slice(0, 12)}`;
    const outbox = payouts(fromSqlite(sqliteFile()), table);
    for (const text of ddlWith(outbox, 'reference_id TEXT', 'reference_id TEXT COLLATE NOCASE')) onSqlite(text);
    const refused = await refusal(outbox.ensureSchema({ create: false }));
    expect(refused).toBeInstanceOf(ConfigurationError);
    expect((refused as Error).message).toContain(
      'reference_id compares with the collation NOCASE, which makes keys that differ by case or accent one (it needs BINARY',
    );
  });

  it('Postgres (a non-deterministic ICU collation) is refused with the ALTER that fixes it', async () => {
    const table = `payouts_${randomUUID().replaceAll('-', '').slice(0, 12)}`;
    await pgDb.pool.query(
      "CREATE COLLATION IF NOT EXISTS case_blind (provider = icu, locale = 'und-u-ks-level2', deterministic = false)",
    );
    const outbox = payouts(fromPg(pgDb.pool), table);
    for (const text of ddlWith(outbox, 'reference_id VARCHAR(100)', 'reference_id VARCHAR(100) COLLATE case_blind'))
      await pgDb.pool.query(text);
    const refused = await refusal(outbox.ensureSchema({ create: false }));
    expect(refused).toBeInstanceOf(ConfigurationError);
    expect((refused as Error).message).toContain(
      'reference_id compares with the collation case_blind, which makes keys that differ by case or accent one (it needs a deterministic collation',
    );
    for (const fix of fixesOf(refused)) await pgDb.pool.query(fix);
    await outbox.ensureSchema({ create: false });
  });
});

describe('a key too short for the longest key the ledger writes (255 characters)', () => {
  it('Postgres VARCHAR(32) is refused with the ALTER that widens it; widened, a payment with a long id runs', async () => {
    const table = fresh();
    await pgDb.pool.query(`CREATE TABLE ${table} (ledger_key VARCHAR(32) PRIMARY KEY, ${ROW})`);
    const ledger = new SqlLedger(fromPg(pgDb.pool), { table });
    const refused = await refusal(ledger.ensureSchema({ create: false }));
    expect(refused).toBeInstanceOf(ConfigurationError);
    expect((refused as Error).message).toContain('ledger_key holds 32 characters, fewer than the 255 written into it');
    const fixes = fixesOf(refused);
    expect(fixes).toEqual([`ALTER TABLE ${table} ALTER COLUMN ledger_key TYPE VARCHAR(255)`]);
    for (const fix of fixes) await pgDb.pool.query(fix);
    await ledger.ensureSchema({ create: false });
    const payment = `PAY_${'7'.repeat(120)}`;
    expect(await ran(ledger, [payment])).toEqual([payment]);
  });

  it('SQLite ignores a declared length: VARCHAR(32) is text, accepted, and holds a long key', async () => {
    const table = fresh();
    onSqlite(`CREATE TABLE ${table} (ledger_key VARCHAR(32) NOT NULL PRIMARY KEY, ${ROW})`);
    const ledger = new SqlLedger(fromSqlite(sqliteFile()), { table });
    await ledger.ensureSchema({ create: false });
    const payment = `PAY_${'7'.repeat(120)}`;
    expect(await ran(ledger, [payment, payment])).toEqual([payment]);
  });
});

const composite: Record<
  string,
  { client: () => SqlClient<unknown>; key: string; exec: (sql: string) => Promise<unknown> }
> = {
  'node-postgres': { client: () => fromPg(pgDb.pool), key: 'VARCHAR(255)', exec: (sql) => pgDb.pool.query(sql) },
  'mysql2 (MariaDB)': {
    client: () => fromMysql2(mariaDb.pool),
    key: 'VARCHAR(255) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin',
    exec: (sql) => mariaDb.pool.query(sql),
  },
  'node:sqlite': { client: () => fromSqlite(sqliteFile()), key: 'TEXT', exec: async (sql) => onSqlite(sql) },
};

describe.each(Object.entries(composite))('%s: a primary key of more than the key', (name, { client, key, exec }) => {
  it('PRIMARY KEY (ledger_key, expires_at) is refused, naming the primary key to have', async () => {
    const table = fresh();
    await exec(`CREATE TABLE ${table} (ledger_key ${key} NOT NULL, ${ROW}, PRIMARY KEY (ledger_key, expires_at))`);
    const ledger = new SqlLedger(client(), { table });
    const refused = await refusal(ledger.ensureSchema({ create: false }));
    expect(refused).toBeInstanceOf(ConfigurationError);
    expect((refused as Error).message).toContain(
      'ledger_key is not the whole primary key: it is (ledger_key, expires_at), not (ledger_key)',
    );
    if (name === 'node:sqlite') return; // SQLite cannot change a primary key: the fix is a new table
    for (const fix of fixesOf(refused)) await exec(fix);
    await ledger.ensureSchema({ create: false });
    const payment = `PAY_${randomUUID()}`;
    expect(await ran(ledger, [payment, payment])).toEqual([payment]);
  });
});

describe('SQLite: the key is NOT NULL, as in the Drizzle table', () => {
  it('ensureSchema makes it NOT NULL, and still accepts a table made before without it', async () => {
    const made = fresh();
    const ledger = new SqlLedger(fromSqlite(sqliteFile()), { table: made });
    await ledger.ensureSchema();
    const db = new DatabaseSync(sqliteFile(), { readOnly: true });
    const info = db
      .prepare(`SELECT "notnull" AS not_null FROM pragma_table_info(?) WHERE name = 'ledger_key'`)
      .get(made);
    db.close();
    expect(info?.not_null).toBe(1);
    expect(ledger.schemaSql()).toContain('ledger_key TEXT NOT NULL PRIMARY KEY');
    const older = fresh();
    onSqlite(`CREATE TABLE ${older} (ledger_key TEXT PRIMARY KEY, ${ROW})`);
    await new SqlLedger(fromSqlite(sqliteFile()), { table: older }).ensureSchema({ create: false });
  });
});
