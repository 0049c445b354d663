/**
 * ensureSchema over a scripted client that describes the table as it is given: created when
 * asked, always checked, refused with what differs and the statement that fixes it. The same on
 * real databases: test/integration/sql/<driver>/scenarios.test.ts.
 */
import { describe, expect, it } from 'vitest';
import { ConfigurationError } from '../../../src/index.js';
import { PACE_COLUMNS, PAYOUT_COLUMNS } from '../../../src/sql/dialects/mysql/payout-statements.js';
import { SqlLedger, SqlPayouts } from '../../../src/sql/index.js';
import type { TableColumn } from '../../../src/sql/schema-check.js';
import type { SqlClient } from '../../../src/sql/sql-client.js';

const MADE = [
  { name: 'ledger_key', type: 'varchar', not_null: 1, primary_key: 1, collation: 'utf8mb4_bin' },
  { name: 'mark_rank', type: 'smallint', not_null: 0, primary_key: 0, collation: null },
  { name: 'handled_statuses', type: 'smallint', not_null: 1, primary_key: 0, collation: null },
  { name: 'expires_at', type: 'bigint', not_null: 1, primary_key: 0, collation: null },
  { name: 'claim_id', type: 'bigint', not_null: 0, primary_key: 0, collation: null },
];

/** A MySQL client whose table is described as `columns`; `sent` records every statement. */
function describedAs(columns: readonly object[]) {
  const sent: string[] = [];
  const client: SqlClient<null> = {
    dialect: 'mysql',
    async begin() {
      return {
        tx: null,
        async query(text) {
          sent.push(text);
          return {
            rows: text.includes('information_schema') ? (columns as Record<string, unknown>[]) : [],
            affected: 0,
          };
        },
        async commit() {},
        async rollback() {},
        abandon() {},
      };
    },
  };
  return { sent, ledger: new SqlLedger(client, { table: 'shop.ledger' }) };
}

describe('ensureSchema', () => {
  it('creates the table, then checks it', async () => {
    const { sent, ledger } = describedAs(MADE);
    await ledger.ensureSchema();
    expect(sent[0]).toMatch(
      /^CREATE TABLE IF NOT EXISTS shop\.ledger \(ledger_key VARCHAR\(255\) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NOT NULL PRIMARY KEY, .*handled_statuses SMALLINT NOT NULL DEFAULT 0/,
    );
    expect(sent.at(-1)).toMatch(/FROM information_schema\.COLUMNS/);
  });

  it('{ create: false } only checks: no DDL is sent', async () => {
    const { sent, ledger } = describedAs(MADE);
    await ledger.ensureSchema({ create: false });
    expect(sent).toHaveLength(1);
    expect(sent[0]).toMatch(/^SELECT .*information_schema\.COLUMNS/);
  });

  it('refuses a missing table, naming the statements that create it', async () => {
    const refused: unknown = await describedAs([])
      .ledger.ensureSchema({ create: false })
      .catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(ConfigurationError);
    expect(refused).toMatchObject({
      field: 'table',
      message: expect.stringMatching(
        /^the ledger's table shop\.ledger does not exist .*create it with CREATE TABLE IF NOT EXISTS shop\.ledger/,
      ),
    });
  });

  it('refuses a table that differs, naming each difference and the statement that fixes it', async () => {
    const columns = MADE.filter((column) => column.name !== 'handled_statuses').map((column) =>
      column.name === 'ledger_key' ? { ...column, collation: 'utf8mb4_general_ci' } : column,
    );
    const refused: unknown = await describedAs(columns)
      .ledger.ensureSchema()
      .catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(ConfigurationError);
    const message = (refused as Error).message;
    expect(message).toContain('ledger_key compares with the collation utf8mb4_general_ci');
    expect(message).toContain('handled_statuses is missing');
    expect(message).toContain(
      'ALTER TABLE shop.ledger MODIFY COLUMN ledger_key VARCHAR(255) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NOT NULL;',
    );
    expect(message).toContain('ALTER TABLE shop.ledger ADD COLUMN handled_statuses SMALLINT NOT NULL DEFAULT 0;');
  });

  it('refuses a create that is not a boolean', async () => {
    // @ts-expect-error: create is a boolean
    await expect(describedAs(MADE).ledger.ensureSchema({ create: 'no' })).rejects.toMatchObject({ field: 'create' });
  });
});

/** A column as MySQL describes it when the outbox's DDL made it. */
const described = (column: TableColumn) => ({
  name: column.name,
  type: column.types[0],
  length: column.chars ?? null,
  not_null: column.notNull ? 1 : 0,
  primary_key: column.primaryKey ? 1 : 0,
  collation: column.binary ? 'utf8mb4_bin' : null,
});

/** A MySQL client whose tables are described as `tables` (by name); `sent` records every statement. */
function payoutsOn(tables: Readonly<Record<string, readonly object[]>>) {
  const sent: string[] = [];
  const client: SqlClient<null> = {
    dialect: 'mysql',
    async begin() {
      return {
        tx: null,
        async query(text, params) {
          sent.push(text);
          // The pace table's row is there when the pace table is.
          const paced = text.startsWith('SELECT id FROM') && tables.payouts_pace !== undefined ? [{ id: 1 }] : [];
          const rows = text.includes('information_schema') ? (tables[String(params[1])] ?? []) : paced;
          return { rows: rows as Record<string, unknown>[], affected: 0 };
        },
        async commit() {},
        async rollback() {},
        abandon() {},
      };
    },
  };
  return { sent, payouts: new SqlPayouts(client, { table: 'shop.payouts', onRefused() {}, onSettled() {} }) };
}

const PAYOUTS_MADE = {
  payouts: PAYOUT_COLUMNS.map(described),
  payouts_pace: PACE_COLUMNS.map(described),
};

describe("SqlPayouts.ensureSchema: both of the outbox's tables", () => {
  it('{ create: false } only describes the payouts table and its pace table, and reads the pace row', async () => {
    const { sent, payouts } = payoutsOn(PAYOUTS_MADE);
    await payouts.ensureSchema({ create: false });
    expect(sent).toHaveLength(3);
    expect(
      sent.slice(0, 2).every((text) => text.startsWith('SELECT ') && text.includes('information_schema.COLUMNS')),
    ).toBe(true);
    expect(sent[2]).toBe('SELECT id FROM shop.payouts_pace WHERE id = 1 FOR UPDATE');
  });

  it('creates both tables and the pace row, then checks both', async () => {
    const { sent, payouts } = payoutsOn(PAYOUTS_MADE);
    await payouts.ensureSchema();
    expect(sent.slice(0, 3)).toEqual([
      expect.stringMatching(
        /^CREATE TABLE IF NOT EXISTS shop\.payouts \(reference_id VARCHAR\(100\) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NOT NULL PRIMARY KEY, /,
      ),
      'CREATE TABLE IF NOT EXISTS shop.payouts_pace (id INT NOT NULL PRIMARY KEY) ENGINE=InnoDB',
      'INSERT IGNORE INTO shop.payouts_pace (id) VALUES (1)',
    ]);
    expect(sent.slice(3)).toHaveLength(3);
  });

  it('refuses a missing pace table, naming the statements that create it', async () => {
    const { payouts } = payoutsOn({ payouts: PAYOUTS_MADE.payouts });
    await expect(payouts.ensureSchema({ create: false })).rejects.toMatchObject({
      field: 'table',
      message: expect.stringMatching(
        /^the payout outbox's table shop\.payouts_pace does not exist .*create it with CREATE TABLE IF NOT EXISTS shop\.payouts \(.*; CREATE TABLE IF NOT EXISTS shop\.payouts_pace \(id INT NOT NULL PRIMARY KEY\) ENGINE=InnoDB; INSERT IGNORE INTO shop\.payouts_pace \(id\) VALUES \(1\);/,
      ),
    });
  });

  it('refuses what differs in each table, with each fix', async () => {
    const { payouts } = payoutsOn({
      payouts: PAYOUTS_MADE.payouts.map((column) =>
        column.name === 'reference_id' ? { ...column, collation: 'utf8mb4_general_ci', length: 64 } : column,
      ),
      payouts_pace: PAYOUTS_MADE.payouts_pace.map((column) => ({ ...column, primary_key: 0 })),
    });
    const refused: unknown = await payouts.ensureSchema().catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(ConfigurationError);
    expect((refused as Error).message).toBe(
      "the payout outbox's table shop.payouts is not the table the payout outbox needs: reference_id holds 64 characters, fewer than the 100 written into it, " +
        'compares with the collation utf8mb4_general_ci: it needs utf8mb4 compared byte for byte (utf8mb4_bin), or keys that differ by case or accent become one, and characters outside its set are stored as ?. ' +
        'Fix it with: ALTER TABLE shop.payouts MODIFY COLUMN reference_id VARCHAR(100) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NOT NULL; ' +
        "the payout outbox's table shop.payouts_pace is not the table the payout outbox needs: id is not the primary key. " +
        'Fix it with: ALTER TABLE shop.payouts_pace MODIFY COLUMN id INT NOT NULL, ADD PRIMARY KEY (id);',
    );
  });

  it('refuses a create that is not a boolean, sending nothing', async () => {
    const { sent, payouts } = payoutsOn(PAYOUTS_MADE);
    // @ts-expect-error: create is a boolean
    await expect(payouts.ensureSchema({ create: 1 })).rejects.toMatchObject({ field: 'create' });
    expect(sent).toEqual([]);
  });
});
