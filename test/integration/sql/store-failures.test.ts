/**
 * Failures that say what happened (issue 31, item 5): when the SQL ledger fails, the webhook
 * handler's log line and the error `onError` receives name the table and the database's own
 * message and code, masked of secrets, instead of `cause: 'error'`. The ledger's table dropped
 * under a running handler (as `drizzle-kit push` drops a table it does not know), and a database
 * that refuses the connection; on real PostgreSQL (node-postgres) and MariaDB (mysql2), through
 * the public createWebhookHandler. No password of the pool's configuration ever shows.
 */
import { randomUUID } from 'node:crypto';
import { createServer } from 'node:net';
import { inspect } from 'node:util';
import { PrismaPg } from '@prisma/adapter-pg';
import { drizzle } from 'drizzle-orm/node-postgres';
import { Kysely, PostgresDialect } from 'kysely';
import mysql from 'mysql2/promise';
import pg from 'pg';
import postgresJs from 'postgres';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  SqlLedger,
  fromDrizzle,
  fromKysely,
  fromMysql2,
  fromPg,
  fromPostgresJs,
  fromPrisma,
  type PrismaTransactionLike,
  type SqlClient,
} from '../../../src/sql/index.js';
import { createWebhookHandler, signCallback, WebhookHandlerError } from '../../../src/webhooks/index.js';
import { hasMariadb, MariadbServer } from '../../helpers/mariadb.js';
import { hasPostgres, PostgresServer } from '../../helpers/postgres.js';
import { generatePrismaClient, removePrismaClients } from '../../helpers/prisma.js';

const API_KEY = 'sk_test_store_failures_01';
const PASSWORD = 'S3cret-Ledger-Pa55';

let postgres: PostgresServer;
let mariadb: MariadbServer;
let closedPort: number;
const closing: (() => Promise<unknown>)[] = [];

beforeAll(async () => {
  [postgres, mariadb] = await Promise.all([PostgresServer.start(), MariadbServer.start()]);
  // A port nothing listens on: the database refuses the connection.
  const probe = createServer();
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
  closedPort = (probe.address() as { port: number }).port;
  await new Promise((resolve) => probe.close(resolve));
}, 60_000);
afterAll(async () => {
  for (const close of closing) await close().catch(() => undefined);
  await postgres?.destroy();
  await mariadb?.destroy();
  removePrismaClients();
});

/** The handler over `client`, with a logger and onError that keep everything they are given. */
async function receiver(client: SqlClient<unknown>, table: string, create: boolean) {
  const ledger = new SqlLedger(client, { table });
  if (create) await ledger.ensureSchema();
  const logged: unknown[][] = [];
  const errors: unknown[] = [];
  const keep = (...args: unknown[]) => void logged.push(args);
  const handler = createWebhookHandler({
    verifier: { apiKey: API_KEY },
    store: ledger,
    logger: { debug() {}, info() {}, warn: keep, error: keep },
    onError: (error) => void errors.push(error),
    onEvent: async () => undefined,
  });
  const deliver = async () => {
    const { rawBody, headers } = await signCallback(API_KEY, {
      payment_id: `PAY_${randomUUID()}`,
      reference_id: 'ORDER_1',
      amount: 50,
      status: 'SUCCESS',
    });
    return handler.handle({ body: rawBody, headers });
  };
  return { deliver, logged, errors };
}

/** Everything a merchant could print of what the handler gave: the log line and its fields, onError's error as JSON and inspected. */
const shown = (logged: unknown[][], errors: unknown[]) =>
  [
    ...logged.flat().map((part) => (typeof part === 'string' ? part : JSON.stringify(part))),
    ...errors.flatMap((error) => [JSON.stringify(error), inspect(error, { showHidden: true, depth: 5 })]),
  ].join('\n');

function expectTold(run: { logged: unknown[][]; errors: unknown[] }, said: RegExp): void {
  expect(run.logged).toHaveLength(1);
  const [line] = run.logged[0] as [string];
  expect(line).toMatch(said);
  expect(run.errors).toHaveLength(1);
  const [error] = run.errors;
  expect(error).toBeInstanceOf(WebhookHandlerError);
  expect(error).toMatchObject({ stage: 'store', message: expect.stringMatching(said) });
  expect(shown(run.logged, run.errors)).not.toContain(PASSWORD);
}

describe.skipIf(!hasPostgres())('store failures on PostgreSQL (node-postgres)', () => {
  it('the ledger table dropped under a running handler: 503, and the line names the table and says relation … does not exist (42P01)', async () => {
    const pool = new pg.Pool({ connectionString: postgres.url, max: 2 });
    closing.push(() => pool.end());
    const table = `failing_${randomUUID().replaceAll('-', '').slice(0, 12)}`;
    const run = await receiver(fromPg(pool), table, true);
    expect((await run.deliver()).status).toBe(200);
    await pool.query(`DROP TABLE ${table} CASCADE`);
    expect((await run.deliver()).status).toBe(503);
    expectTold(run, new RegExp(`SQL ledger table ${table}: relation "${table}" does not exist \\(42P01\\)`));
  });

  /** The same failure through each other Postgres client: the driver's words, past the ORM's wrapping. */
  const others: Record<string, () => Promise<SqlClient<unknown>>> = {
    'postgres.js': async () => {
      const sql = postgresJs(postgres.url, { max: 2, onnotice: () => undefined });
      closing.push(() => sql.end({ timeout: 1 }));
      return fromPostgresJs(sql) as SqlClient<unknown>;
    },
    'Drizzle (whose own error quotes the statement and its values)': async () => {
      const pool = new pg.Pool({ connectionString: postgres.url, max: 2 });
      closing.push(() => pool.end());
      return fromDrizzle(drizzle(pool));
    },
    Kysely: async () => {
      const db = new Kysely<Record<string, never>>({
        dialect: new PostgresDialect({ pool: new pg.Pool({ connectionString: postgres.url, max: 2 }) }),
      });
      closing.push(() => db.destroy());
      return fromKysely(db);
    },
    'Prisma (@prisma/adapter-pg)': async () => {
      type Generated = {
        $transaction(fn: (tx: PrismaTransactionLike) => Promise<unknown>, options?: object): PromiseLike<unknown>;
        $disconnect(): Promise<void>;
      };
      const { PrismaClient } = (await import(generatePrismaClient('postgresql'))) as {
        PrismaClient: new (options: { adapter: unknown }) => Generated;
      };
      const prisma = new PrismaClient({ adapter: new PrismaPg({ connectionString: postgres.url, max: 2 }) });
      closing.push(() => prisma.$disconnect());
      return fromPrisma(prisma, 'postgres');
    },
  };
  for (const [name, open] of Object.entries(others)) {
    it(`${name}: the ledger table dropped, and the line says relation … does not exist (42P01)`, async () => {
      const table = `failing_${randomUUID().replaceAll('-', '').slice(0, 12)}`;
      const run = await receiver(await open(), table, true);
      expect((await run.deliver()).status).toBe(200);
      const admin = new pg.Pool({ connectionString: postgres.url, max: 1 });
      await admin.query(`DROP TABLE ${table} CASCADE`);
      await admin.end();
      expect((await run.deliver()).status).toBe(503);
      expectTold(run, new RegExp(`SQL ledger table ${table}: relation "${table}" does not exist \\(42P01\\)`));
      // The line is the database's, never the ORM's quoting of the statement and its values.
      expect(shown(run.logged, [])).not.toContain('params:');
    }, 60_000);
  }

  it('a database that refuses the connection: 503, and the line says ECONNREFUSED with the table, never the password', async () => {
    const pool = new pg.Pool({ connectionString: `postgres://shop:${PASSWORD}@127.0.0.1:${closedPort}/shop`, max: 1 });
    closing.push(() => pool.end());
    const run = await receiver(fromPg(pool), 'myr_webhook_ledger', false);
    expect((await run.deliver()).status).toBe(503);
    expectTold(
      run,
      new RegExp(
        `SQL ledger table myr_webhook_ledger: connect ECONNREFUSED 127\\.0\\.0\\.1:${closedPort} \\(ECONNREFUSED\\)`,
      ),
    );
  });
});

describe.skipIf(!hasMariadb())('store failures on MariaDB (mysql2)', () => {
  it("the ledger table dropped under a running handler: 503, and the line says Table '…' doesn't exist with its code", async () => {
    const pool = mysql.createPool({ ...mariadb.options, connectionLimit: 2 });
    closing.push(() => pool.end());
    const table = `failing_${randomUUID().replaceAll('-', '').slice(0, 12)}`;
    const run = await receiver(fromMysql2(pool), table, true);
    expect((await run.deliver()).status).toBe(200);
    await pool.query(`DROP TABLE ${table}`);
    expect((await run.deliver()).status).toBe(503);
    expectTold(
      run,
      new RegExp(`SQL ledger table ${table}: Table '\\w+\\.${table}' doesn't exist \\(ER_NO_SUCH_TABLE 1146\\)`),
    );
  });

  it('a database that refuses the connection: 503, and the line says ECONNREFUSED with the table, never the password', async () => {
    const pool = mysql.createPool({
      host: '127.0.0.1',
      port: closedPort,
      user: 'shop',
      password: PASSWORD,
      database: 'shop',
      connectionLimit: 1,
    });
    closing.push(() => pool.end());
    const run = await receiver(fromMysql2(pool), 'myr_webhook_ledger', false);
    expect((await run.deliver()).status).toBe(503);
    expectTold(
      run,
      new RegExp(
        `SQL ledger table myr_webhook_ledger: connect ECONNREFUSED 127\\.0\\.0\\.1:${closedPort} \\(ECONNREFUSED\\)`,
      ),
    );
  });
});
