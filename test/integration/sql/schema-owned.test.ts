/**
 * The ledger's table when the merchant's own tools own it, on real Postgres, MariaDB and SQLite:
 * `ensureSchema({ create: false })` checks the table a migration made and refuses one that a
 * schema tool dropped (it never starts an empty ledger, which would fulfil every resent callback
 * again), and `ensureSchema()` refuses a merchant-made table that differs (on MySQL a key compared
 * without regard to case or accents, under which `PAY_AB12`, `PAY_ab12` and `PAY_àb12` were one
 * payment), naming the statement that fixes it.
 */
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConfigurationError } from '../../../src/index.js';
import { SqlLedger, fromMysql2, fromPg, fromSqlite, type SqlClient } from '../../../src/sql/index.js';
import { mariadbForFile, postgresForFile } from '../../helpers/database-for-file.js';
import { migrate, refusal, statementsOf } from '../../helpers/schema-migration.js';

const pgDb = postgresForFile(4);
const mariaDb = mariadbForFile({ connectionLimit: 4 });
let dir: string;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'myr-schema-'));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const fresh = () => `ledger_${randomUUID().replaceAll('-', '').slice(0, 12)}`;

const clients: Record<string, () => SqlClient<unknown>> = {
  'node-postgres': () => fromPg(pgDb.pool),
  'mysql2 (MariaDB)': () => fromMysql2(mariaDb.pool),
  'node:sqlite': () => fromSqlite(join(dir, 'shop.db')),
};

describe.each(Object.entries(clients))('%s', (_name, client) => {
  it('create: false passes on the table a migration made from schemaSql, and creates nothing', async () => {
    const table = fresh();
    const ledger = new SqlLedger(client(), { table });
    const missing = await refusal(ledger.ensureSchema({ create: false }));
    expect(missing).toBeInstanceOf(ConfigurationError);
    expect(missing).toMatchObject({
      field: 'table',
      message: expect.stringContaining(`the ledger's table ${table} does not exist`),
    });
    for (const statement of statementsOf(ledger.schemaSql())) await migrate(client(), statement);
    await ledger.ensureSchema({ create: false });
  });

  it('a table the schema tool dropped: create: false refuses it, naming the statement that creates it, instead of starting an empty ledger', async () => {
    const table = fresh();
    const ledger = new SqlLedger(client(), { table });
    await ledger.ensureSchema();
    const payment = `PAY_${randomUUID()}`;
    const options = { raiseMark: false, completedTtlMs: 86_400_000, order: { paymentId: payment, rank: 1 } };
    expect((await ledger.run(`payment:${payment}:SUCCESS`, () => undefined, options)).outcome).toBe('processed');
    await migrate(client(), `DROP TABLE ${table}`);
    const refused = await refusal(ledger.ensureSchema({ create: false }));
    expect(refused).toBeInstanceOf(ConfigurationError);
    expect((refused as Error).message).toContain(`CREATE TABLE IF NOT EXISTS ${table}`);
  });

  it('a table without handled_statuses and with an INT claim_id: refused with each difference and its fix; fixed, it passes', async () => {
    const table = fresh();
    const key = client().dialect === 'sqlite' ? 'TEXT' : 'VARCHAR(255)';
    await migrate(
      client(),
      `CREATE TABLE ${table} (ledger_key ${key} NOT NULL PRIMARY KEY, mark_rank SMALLINT, expires_at BIGINT NOT NULL, claim_id INT)`,
    );
    const ledger = new SqlLedger(client(), { table });
    const refused = await refusal(ledger.ensureSchema());
    expect(refused).toBeInstanceOf(ConfigurationError);
    const message = (refused as Error).message;
    expect(message).toContain('handled_statuses is missing');
    expect(message).toContain(`ALTER TABLE ${table} ADD COLUMN handled_statuses`);
    if (client().dialect === 'sqlite') return; // SQLite calls any whole-number type INTEGER: an INT holds 64 bits there
    expect(message).toMatch(/claim_id is int(eger)?, not bigint/);
    for (const fix of message
      .slice(message.indexOf('Fix it with: ') + 'Fix it with: '.length)
      .split(';')
      .map((text) => text.trim())
      .filter(Boolean))
      await migrate(client(), fix);
    await ledger.ensureSchema({ create: false });
  });
});

describe('MySQL: a merchant-made table whose key ignores case and accents', () => {
  it('is refused by ensureSchema, naming the MODIFY that makes it compare bytes; fixed, PAY_AB12, PAY_ab12 and PAY_àb12 are three payments', async () => {
    const table = fresh();
    await mariaDb.pool.query(
      `CREATE TABLE ${table} (ledger_key VARCHAR(255) CHARACTER SET utf8mb4 COLLATE utf8mb4_general_ci NOT NULL PRIMARY KEY, mark_rank SMALLINT NULL, handled_statuses SMALLINT NOT NULL DEFAULT 0, expires_at BIGINT NOT NULL, claim_id BIGINT NULL) ENGINE=InnoDB`,
    );
    const ledger = new SqlLedger(fromMysql2(mariaDb.pool), { table });
    const refused = await refusal(ledger.ensureSchema());
    expect(refused).toBeInstanceOf(ConfigurationError);
    const message = (refused as Error).message;
    expect(message).toContain('ledger_key compares with the collation utf8mb4_general_ci');
    const fix = /Fix it with: (ALTER TABLE [^;]+);/.exec(message)?.[1];
    expect(fix).toBe(
      `ALTER TABLE ${table} MODIFY COLUMN ledger_key VARCHAR(255) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NOT NULL`,
    );
    await mariaDb.pool.query(fix ?? '');
    await ledger.ensureSchema({ create: false });
    const ran: string[] = [];
    for (const payment of ['PAY_AB12', 'PAY_ab12', 'PAY_àb12']) {
      const options = { raiseMark: false, completedTtlMs: 86_400_000, order: { paymentId: payment, rank: 1 } };
      if ((await ledger.run(`payment:${payment}:SUCCESS`, () => undefined, options)).outcome === 'processed')
        ran.push(payment);
    }
    expect(ran).toEqual(['PAY_AB12', 'PAY_ab12', 'PAY_àb12']);
  });
});

describe('MySQL: a merchant-made key that cuts or mangles keys', () => {
  it.each([
    [
      'VARCHAR(32) (INSERT IGNORE cuts a longer key: SUCCESS and REFUNDED became one)',
      'VARCHAR(32) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin',
      'holds 32 characters, fewer than the 255 written into it',
    ],
    [
      'latin1_bin (a character outside latin1 is stored as ?)',
      'VARCHAR(255) CHARACTER SET latin1 COLLATE latin1_bin',
      'compares with the collation latin1_bin',
    ],
  ])(
    '%s: refused, naming the MODIFY; fixed, a SUCCESS and a REFUNDED of one long payment id are both run',
    async (_, key, problem) => {
      const table = fresh();
      await mariaDb.pool.query(
        `CREATE TABLE ${table} (ledger_key ${key} NOT NULL PRIMARY KEY, mark_rank SMALLINT NULL, handled_statuses SMALLINT NOT NULL DEFAULT 0, expires_at BIGINT NOT NULL, claim_id BIGINT NULL) ENGINE=InnoDB`,
      );
      const ledger = new SqlLedger(fromMysql2(mariaDb.pool), { table });
      const refused = await refusal(ledger.ensureSchema({ create: false }));
      expect(refused).toBeInstanceOf(ConfigurationError);
      const message = (refused as Error).message;
      expect(message).toContain(`ledger_key ${problem}`);
      const fix = /Fix it with: (ALTER TABLE [^;]+);/.exec(message)?.[1];
      expect(fix).toContain('VARCHAR(255) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin');
      await mariaDb.pool.query(fix ?? '');
      await ledger.ensureSchema({ create: false });
      const payment = `PAY_${'ü'.repeat(40)}`;
      const run = (status: 'SUCCESS' | 'REFUNDED', rank: number) =>
        ledger.run(`payment:${payment}:${status}`, () => undefined, {
          raiseMark: status === 'REFUNDED',
          completedTtlMs: 86_400_000,
          order: { paymentId: payment, rank },
        });
      expect((await run('SUCCESS', 1)).outcome).toBe('processed');
      expect((await run('REFUNDED', 2)).outcome).toBe('processed');
    },
  );
});
