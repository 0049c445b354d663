/**
 * `npx myr-gateway doctor` with MYR_GATEWAY_DATABASE_URL: the ledger's table checked as
 * `ensureSchema({ create: false })` checks it, through the project's own driver, on real
 * PostgreSQL, MariaDB and a SQLite file: a missing table fails naming the statement that creates
 * it, the table the ledger made passes, and the URL's password is never printed.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { doctorMain } from '../../src/doctor/command.js';
import { SqlLedger, fromMysql2, fromPg, fromSqlite } from '../../src/sql/index.js';
import { mariadbForFile, postgresForFile } from '../helpers/database-for-file.js';

const pgDb = postgresForFile(2);
const mariaDb = mariadbForFile({ connectionLimit: 2 });
let dir: string;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'myr-doctor-ledger-'));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** The doctor's `ledger table` line, with no gateway configured (the gateway's own checks fail apart). */
async function ledgerLine(env: Record<string, string>): Promise<{ line: string; out: string }> {
  let out = '';
  await doctorMain([], { env, write: (text) => void (out += text), writeError: (text) => void (out += text) });
  return {
    line: out.split('\n').find((text) => text.slice(6).startsWith('ledger table ')) ?? '(no ledger table line)',
    out,
  };
}

/** A Postgres URL with a password in it, which the test server's trust authentication ignores. */
const withPassword = (url: string) => url.replace(/:\/\/([^:@/]+)@/, '://$1:s3cret-pw@');

describe('doctor: the SQL ledger table', () => {
  it('prints no ledger line unless MYR_GATEWAY_DATABASE_URL is set', async () => {
    expect((await ledgerLine({})).line).toBe('(no ledger table line)');
  });

  it.each([
    [
      'PostgreSQL',
      () => withPassword(pgDb.server.url),
      () => new SqlLedger(fromPg(pgDb.pool), { table: 'doctor_ledger' }),
    ],
    [
      'MariaDB',
      () => `mysql://root@127.0.0.1:${mariaDb.server.port}/${mariaDb.server.options.database}`,
      () => new SqlLedger(fromMysql2(mariaDb.pool), { table: 'doctor_ledger' }),
    ],
    [
      'SQLite',
      () => join(dir, 'shop.db'),
      () => new SqlLedger(fromSqlite(join(dir, 'shop.db')), { table: 'doctor_ledger' }),
    ],
  ])(
    '%s: fails on a missing table naming the CREATE TABLE, passes once the ledger made it; the password never printed',
    async (_name, url, ledger) => {
      const env = { MYR_GATEWAY_DATABASE_URL: url(), MYR_GATEWAY_LEDGER_TABLE: 'doctor_ledger' };
      if (!url().includes('://'))
        await ledger()
          .ensureSchema({ create: false })
          .catch(() => undefined); // opens the file only
      const missing = await ledgerLine(env);
      expect(missing.line).toMatch(
        /^FAIL {2}ledger table +the ledger's table doctor_ledger does not exist .*CREATE TABLE IF NOT EXISTS doctor_ledger/,
      );
      await ledger().ensureSchema();
      const made = await ledgerLine(env);
      expect(made.line).toMatch(/^ok {4}ledger table +doctor_ledger in .* is the table the ledger needs$/);
      expect(missing.out + made.out).not.toContain('s3cret-pw');
    },
  );

  it('prints where the database is, never a password given as a query parameter (node-postgres honours ?password=)', async () => {
    const pgUrl = new URL(pgDb.server.url);
    pgUrl.search = '?password=s3cret-pw&sslpassword=s3cret-ssl&application_name=doctor';
    const env = { MYR_GATEWAY_DATABASE_URL: pgUrl.href, MYR_GATEWAY_LEDGER_TABLE: 'doctor_query_ledger' };
    await new SqlLedger(fromPg(pgDb.pool), { table: 'doctor_query_ledger' }).ensureSchema();
    const ok = await ledgerLine(env);
    // Where the database is: scheme, user, host, port, database; nothing of the query.
    expect(ok.line).toContain(`doctor_query_ledger in postgres://${pgUrl.username}@${pgUrl.host}${pgUrl.pathname} is`);
    // MariaDB's root has no password: the one given is refused, and the refusal printed without it.
    const mariaUrl = `mysql://root:s3cret-pw@127.0.0.1:${mariaDb.server.port}/${mariaDb.server.options.database}?charset=utf8mb4`;
    const refused = await ledgerLine({ MYR_GATEWAY_DATABASE_URL: mariaUrl });
    expect(refused.line).toMatch(/^FAIL {2}ledger table +the database did not answer the check: Access denied/);
    expect(ok.out + refused.out).not.toMatch(/s3cret|application_name/);
  });

  it('a SQLite path that does not exist fails and creates nothing', async () => {
    const path = join(dir, 'absent.db');
    const { line } = await ledgerLine({ MYR_GATEWAY_DATABASE_URL: path });
    expect(line).toMatch(/^FAIL {2}ledger table +MYR_GATEWAY_DATABASE_URL names no SQLite file that exists/);
    expect((await import('node:fs')).existsSync(path)).toBe(false);
  });
});
