/**
 * The ledger's Drizzle tables as Drizzle describes them: the table name (and Postgres or MySQL
 * schema) `SqlLedger`'s `table` option takes, the ledger's columns and its expiry index under the
 * name the ledger's own DDL gives it. What drizzle-kit makes of them on real databases:
 * test/integration/sql/migrations.test.ts and ledger-drizzle-kit-push.test.ts.
 */
import { getTableConfig as mysqlConfig } from 'drizzle-orm/mysql-core';
import { getTableConfig as pgConfig } from 'drizzle-orm/pg-core';
import { getTableConfig as sqliteConfig } from 'drizzle-orm/sqlite-core';
import { describe, expect, it } from 'vitest';
import { mysqlLedgerTable, pgLedgerTable, sqliteLedgerTable } from '../../../src/drizzle/index.js';

const COLUMNS = ['ledger_key', 'mark_rank', 'handled_statuses', 'expires_at', 'claim_id'];

describe('the ledger tables', () => {
  it.each([
    ['postgres', () => pgConfig(pgLedgerTable()), 'myr_webhook_ledger_expires'],
    ['mysql', () => mysqlConfig(mysqlLedgerTable()), 'expires_at_idx'],
    ['sqlite', () => sqliteConfig(sqliteLedgerTable()), 'myr_webhook_ledger_expires'],
  ] as const)(
    '%s: myr_webhook_ledger by default, the ledger’s columns, the expiry index under its DDL name',
    (_, config, index) => {
      const table = config();
      expect(table.name).toBe('myr_webhook_ledger');
      expect('schema' in table ? table.schema : undefined).toBeUndefined();
      expect(table.columns.map((column) => column.name)).toEqual(COLUMNS);
      expect(table.columns.filter((column) => column.primary).map((column) => column.name)).toEqual(['ledger_key']);
      expect(table.columns.filter((column) => column.notNull).map((column) => column.name)).toEqual([
        'ledger_key',
        'handled_statuses',
        'expires_at',
      ]);
      expect(table.indexes.map((i) => i.config.name)).toEqual([index]);
    },
  );

  it('takes the table option’s name, schema-qualified on Postgres and MySQL, the index named after the table where the DDL does', () => {
    const pg = pgConfig(pgLedgerTable('payments.webhook_ledger'));
    expect({ schema: pg.schema, name: pg.name, index: pg.indexes[0]?.config.name }).toEqual({
      schema: 'payments',
      name: 'webhook_ledger',
      index: 'webhook_ledger_expires',
    });
    const mysql = mysqlConfig(mysqlLedgerTable('shop.webhook_ledger'));
    expect({ schema: mysql.schema, name: mysql.name, index: mysql.indexes[0]?.config.name }).toEqual({
      schema: 'shop',
      name: 'webhook_ledger',
      index: 'expires_at_idx',
    });
    const sqlite = sqliteConfig(sqliteLedgerTable('webhook_ledger'));
    expect({ name: sqlite.name, index: sqlite.indexes[0]?.config.name }).toEqual({
      name: 'webhook_ledger',
      index: 'webhook_ledger_expires',
    });
  });

  it('keys compare byte for byte on MySQL (utf8mb4_bin): keys differing by case are two payments', () => {
    expect(mysqlConfig(mysqlLedgerTable()).columns[0]?.getSQLType()).toBe(
      'varchar(255) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin',
    );
  });
});
