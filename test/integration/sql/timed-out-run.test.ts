/**
 * A timed-out run lets go at once (issue 31, item 4). The mistake from the Drizzle trial: a
 * handler writes through the app's own client instead of `tx`, and that write waits on the row
 * lock its own run's transaction holds. At handlerTimeoutMs the gateway is answered 503; the run's
 * transaction must then be rolled back and its connection given back at once, so the app's write
 * goes through and the pool stays usable: 10 such callbacks, then the shop's `/checkout` route (a
 * real HTTP server on the same pool) still answers. The log line says the handler waited on its
 * own transaction's lock (Postgres's pg_blocking_pids). Real PostgreSQL and MariaDB, through the
 * public createWebhookHandler and each adapter.
 */
import { randomUUID } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { PrismaMariaDb } from '@prisma/adapter-mariadb';
import { PrismaPg } from '@prisma/adapter-pg';
import { sql as drizzleSql } from 'drizzle-orm';
import { drizzle as drizzleMysql } from 'drizzle-orm/mysql2';
import { drizzle } from 'drizzle-orm/node-postgres';
import { Kysely, MysqlDialect, PostgresDialect, sql as kyselySql } from 'kysely';
import { createPool as createCallbackPool } from 'mysql2';
import mysql from 'mysql2/promise';
import pg from 'pg';
import postgres from 'postgres';
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
import { createWebhookHandler, signCallback } from '../../../src/webhooks/index.js';
import { hasMariadb, MariadbServer } from '../../helpers/mariadb.js';
import { hasPostgres, PostgresServer } from '../../helpers/postgres.js';
import { generatePrismaClient, removePrismaClients } from '../../helpers/prisma.js';

const API_KEY = 'sk_test_timed_out_run_01';
const POOL_SIZE = 10;

interface PrismaShop {
  $executeRawUnsafe(query: string, ...values: unknown[]): Promise<number>;
  $transaction(fn: (tx: PrismaTransactionLike) => Promise<unknown>, options?: object): PromiseLike<unknown>;
  $disconnect(): Promise<void>;
}

let server: PostgresServer;
let admin: pg.Pool;
let mariadb: MariadbServer;
let mysqlAdmin: mysql.Pool;
const closing: (() => Promise<unknown>)[] = [];

beforeAll(async () => {
  [server, mariadb] = await Promise.all([PostgresServer.start(), MariadbServer.start()]);
  admin = new pg.Pool({ connectionString: server.url, max: 2 });
  await admin.query('CREATE TABLE stock (sku TEXT PRIMARY KEY, reserved INT NOT NULL DEFAULT 0)');
  mysqlAdmin = mysql.createPool({ ...mariadb.options, connectionLimit: 2 });
  await mysqlAdmin.query('CREATE TABLE stock (sku VARCHAR(100) PRIMARY KEY, reserved INT NOT NULL DEFAULT 0)');
}, 60_000);
afterAll(async () => {
  for (const close of closing.reverse()) await close().catch(() => undefined);
  await admin?.end();
  await mysqlAdmin?.end();
  await server?.destroy();
  await mariadb?.destroy();
  removePrismaClients();
});

/** One app: its pool, the ledger's client over it, a write through `tx` and the same write through the app's own client. */
interface Shop<Tx> {
  client: SqlClient<Tx>;
  /** Takes the row lock of `sku` in the run's transaction. */
  throughTx(tx: Tx, sku: string): PromiseLike<unknown>;
  /** The mistake: the same row written through the app's own client (another connection of the pool). */
  throughApp(sku: string): Promise<unknown>;
  /** What the `/checkout` route runs on the same pool. */
  checkout(): Promise<unknown>;
}

/** The shop's `/checkout` route over real HTTP: 200 once its query on the pool answered. */
async function serveCheckout(checkout: () => Promise<unknown>): Promise<string> {
  const http: Server = createServer((_, response) => {
    checkout().then(
      () => response.writeHead(200).end('ok'),
      () => response.writeHead(500).end('failed'),
    );
  });
  await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
  closing.push(() => new Promise((resolve) => http.close(resolve)));
  return `http://127.0.0.1:${(http.address() as AddressInfo).port}/checkout`;
}

const shops: Record<string, () => Promise<Shop<never>>> = {
  'Drizzle over a node-postgres pool': async () => {
    const pool = new pg.Pool({ connectionString: server.url, max: POOL_SIZE });
    closing.push(() => pool.end());
    const db = drizzle(pool);
    return shop({
      client: fromDrizzle(db),
      throughTx: (tx, sku) => tx.execute(drizzleSql`UPDATE stock SET reserved = reserved + 1 WHERE sku = ${sku}`),
      throughApp: (sku) => db.execute(drizzleSql`UPDATE stock SET reserved = reserved + 1 WHERE sku = ${sku}`),
      checkout: () => db.execute(drizzleSql`SELECT count(*) FROM stock`),
    });
  },
  'Kysely over a node-postgres pool': async () => {
    const pool = new pg.Pool({ connectionString: server.url, max: POOL_SIZE });
    const db = new Kysely<Record<string, never>>({ dialect: new PostgresDialect({ pool }) });
    closing.push(() => db.destroy());
    return shop({
      client: fromKysely(db),
      throughTx: (tx, sku) => kyselySql`UPDATE stock SET reserved = reserved + 1 WHERE sku = ${sku}`.execute(tx),
      throughApp: (sku) => kyselySql`UPDATE stock SET reserved = reserved + 1 WHERE sku = ${sku}`.execute(db),
      checkout: () => kyselySql`SELECT count(*) FROM stock`.execute(db),
    });
  },
  'postgres.js': async () => {
    const sql = postgres(server.url, { max: POOL_SIZE, onnotice: () => undefined });
    closing.push(() => sql.end({ timeout: 1 }));
    return shop({
      client: fromPostgresJs(sql),
      throughTx: (tx, sku) => tx`UPDATE stock SET reserved = reserved + 1 WHERE sku = ${sku}`,
      throughApp: (sku) => sql`UPDATE stock SET reserved = reserved + 1 WHERE sku = ${sku}`,
      checkout: () => sql`SELECT count(*) FROM stock`,
    });
  },
  'node-postgres': async () => {
    const pool = new pg.Pool({ connectionString: server.url, max: POOL_SIZE });
    closing.push(() => pool.end());
    return shop({
      client: fromPg(pool),
      throughTx: (tx, sku) => tx.query('UPDATE stock SET reserved = reserved + 1 WHERE sku = $1', [sku]),
      throughApp: (sku) => pool.query('UPDATE stock SET reserved = reserved + 1 WHERE sku = $1', [sku]),
      checkout: () => pool.query('SELECT count(*) FROM stock'),
    });
  },
  'Prisma (@prisma/adapter-pg)': async () => {
    const { PrismaClient } = (await import(generatePrismaClient('postgresql'))) as {
      PrismaClient: new (options: { adapter: unknown }) => PrismaShop;
    };
    const prisma = new PrismaClient({ adapter: new PrismaPg({ connectionString: server.url, max: POOL_SIZE }) });
    closing.push(() => prisma.$disconnect());
    return shop({
      client: fromPrisma(prisma, 'postgres'),
      throughTx: (tx, sku) => tx.$executeRawUnsafe('UPDATE stock SET reserved = reserved + 1 WHERE sku = $1', sku),
      throughApp: (sku) => prisma.$executeRawUnsafe('UPDATE stock SET reserved = reserved + 1 WHERE sku = $1', sku),
      checkout: () => prisma.$executeRawUnsafe('SELECT count(*) FROM stock'),
    });
  },
};

const UPDATE_MYSQL = 'UPDATE stock SET reserved = reserved + 1 WHERE sku = ?';
const mysqlShops: Record<string, () => Promise<Shop<never>>> = {
  mysql2: async () => {
    const pool = mysql.createPool({ ...mariadb.options, connectionLimit: POOL_SIZE });
    closing.push(() => pool.end());
    return shop({
      client: fromMysql2(pool),
      throughTx: (tx, sku) => tx.query(UPDATE_MYSQL, [sku]),
      throughApp: (sku) => pool.query(UPDATE_MYSQL, [sku]),
      checkout: () => pool.query('SELECT count(*) FROM stock'),
    });
  },
  'Drizzle over a mysql2 pool': async () => {
    const pool = mysql.createPool({ ...mariadb.options, connectionLimit: POOL_SIZE });
    closing.push(() => pool.end());
    const db = drizzleMysql(pool);
    return shop({
      client: fromDrizzle(db),
      throughTx: (tx, sku) => tx.execute(drizzleSql`UPDATE stock SET reserved = reserved + 1 WHERE sku = ${sku}`),
      throughApp: (sku) => db.execute(drizzleSql`UPDATE stock SET reserved = reserved + 1 WHERE sku = ${sku}`),
      checkout: () => db.execute(drizzleSql`SELECT count(*) FROM stock`),
    });
  },
  'Kysely (MysqlDialect)': async () => {
    const db = new Kysely<Record<string, never>>({
      dialect: new MysqlDialect({ pool: createCallbackPool({ ...mariadb.options, connectionLimit: POOL_SIZE }) }),
    });
    closing.push(() => db.destroy());
    return shop({
      client: fromKysely(db),
      throughTx: (tx, sku) => kyselySql`UPDATE stock SET reserved = reserved + 1 WHERE sku = ${sku}`.execute(tx),
      throughApp: (sku) => kyselySql`UPDATE stock SET reserved = reserved + 1 WHERE sku = ${sku}`.execute(db),
      checkout: () => kyselySql`SELECT count(*) FROM stock`.execute(db),
    });
  },
  'Prisma (@prisma/adapter-mariadb)': async () => {
    const { PrismaClient } = (await import(generatePrismaClient('mysql'))) as {
      PrismaClient: new (options: { adapter: unknown }) => PrismaShop;
    };
    const { host, port, user, database } = mariadb.options;
    const prisma = new PrismaClient({
      adapter: new PrismaMariaDb({ host, port, user, database, connectionLimit: POOL_SIZE }),
    });
    closing.push(() => prisma.$disconnect());
    return shop({
      client: fromPrisma(prisma, 'mysql'),
      throughTx: (tx, sku) => tx.$executeRawUnsafe(UPDATE_MYSQL, sku),
      throughApp: (sku) => prisma.$executeRawUnsafe(UPDATE_MYSQL, sku),
      checkout: () => prisma.$executeRawUnsafe('SELECT count(*) FROM stock'),
    });
  },
};

/** Types each shop by its own client, then lets the table of shops hold them side by side. */
const shop = <Tx>(given: Shop<Tx>): Shop<never> => given as unknown as Shop<never>;

/** The 10 callbacks of the mistake through `app`; answers the log lines. */
async function tenStuckCallbacks(app: Shop<never>, addStock: (sku: string) => Promise<unknown>): Promise<string[]> {
  const url = await serveCheckout(() => app.checkout());
  const ledger = new SqlLedger(app.client, { table: `timeout_${randomUUID().replaceAll('-', '').slice(0, 12)}` });
  await ledger.ensureSchema();
  const lines: string[] = [];
  const appWrites: Promise<unknown>[] = [];
  const handler = createWebhookHandler({
    verifier: { apiKey: API_KEY },
    store: ledger,
    handlerTimeoutMs: 500,
    logger: {
      debug() {},
      info() {},
      warn: (message: unknown) => void lines.push(String(message)),
      error: (message: unknown) => void lines.push(String(message)),
    },
    onEvent: async (event, { tx }) => {
      await app.throughTx(tx, event.signed.reference_id);
      const write = Promise.resolve(app.throughApp(event.signed.reference_id));
      appWrites.push(write);
      await write;
    },
  });
  for (let callback = 0; callback < 10; callback++) {
    const sku = `SKU_${randomUUID()}`;
    await addStock(sku);
    const { rawBody, headers } = await signCallback(API_KEY, {
      payment_id: `PAY_${randomUUID()}`,
      reference_id: sku,
      amount: 50,
      status: 'SUCCESS',
    });
    expect((await handler.handle({ body: rawBody, headers })).status).toBe(503);
  }
  // The pool was not exhausted: the shop's own route answers at once.
  const answer = await fetch(url, { signal: AbortSignal.timeout(5_000) });
  expect(answer.status).toBe(200);
  // Each run's locks went with it: the app's own writes that waited on them all went through.
  const stuck = new Promise((resolve) => setTimeout(resolve, 5_000, 'stuck'));
  expect(await Promise.race([Promise.all(appWrites).then(() => 'written'), stuck])).toBe('written');
  expect(appWrites).toHaveLength(10);
  expect(lines).toHaveLength(10);
  return lines;
}

describe.skipIf(!hasPostgres())('a timed-out run lets go at once: PostgreSQL', () => {
  for (const [name, open] of Object.entries(shops)) {
    it(`${name}: 10 handlers that write through the app's client instead of tx each answer 503, and /checkout still answers`, async () => {
      const lines = await tenStuckCallbacks(await open(), (sku) =>
        admin.query('INSERT INTO stock (sku) VALUES ($1)', [sku]),
      );
      // No session of the shop is left waiting on a lock.
      expect(
        (await admin.query("SELECT count(*)::int AS n FROM pg_stat_activity WHERE wait_event_type = 'Lock'")).rows[0],
      ).toEqual({ n: 0 });
      // Each line says the handler waited on its own transaction's lock, naming the waiting session.
      for (const line of lines)
        expect(line).toMatch(
          /outlived handlerTimeoutMs.*Postgres session \d+ waited on a lock its own transaction held.*instead of tx/,
        );
    }, 60_000);
  }
});

describe.skipIf(!hasMariadb())('a timed-out run lets go at once: MariaDB', () => {
  for (const [name, open] of Object.entries(mysqlShops)) {
    it(`${name}: 10 handlers that write through the app's client instead of tx each answer 503, and /checkout still answers`, async () => {
      const lines = await tenStuckCallbacks(await open(), (sku) =>
        mysqlAdmin.query('INSERT INTO stock (sku) VALUES (?)', [sku]),
      );
      // No transaction of the shop is left waiting on a lock.
      const [waiting] = await mysqlAdmin.query<mysql.RowDataPacket[]>(
        "SELECT count(*) AS n FROM information_schema.INNODB_TRX WHERE trx_state = 'LOCK WAIT'",
      );
      expect(Number(waiting[0]?.n)).toBe(0);
      for (const line of lines) expect(line).toMatch(/outlived handlerTimeoutMs: answered 503/);
    }, 60_000);
  }
});
