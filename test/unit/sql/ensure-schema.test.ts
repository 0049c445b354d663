/**
 * ensureSchema over a scripted client that describes the table as it is given: created when
 * asked, always checked, refused with what differs and the statement that fixes it. The same on
 * real databases: test/integration/sql/<driver>/scenarios.test.ts.
 */
import { describe, expect, it } from 'vitest';
import { ConfigurationError } from '../../../src/index.js';
import { SqlLedger } from '../../../src/sql/index.js';
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
