/**
 * Every examples/payouts-*.ts runs here against a real database and the mock, the way a merchant
 * wires it: a payout debits the seller and is sent once; a FAILED callback (twice) credits the
 * seller back once; a refused payout is credited back; a debit the balance cannot cover stages
 * nothing.
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { PrismaPg } from '@prisma/adapter-pg';
import { drizzle } from 'drizzle-orm/node-postgres';
import { Kysely, PostgresDialect } from 'kysely';
import mysql, { type RowDataPacket } from 'mysql2/promise';
import pg from 'pg';
import postgresJs from 'postgres';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import * as drizzleExample from '../../../../examples/payouts-drizzle.js';
import * as kyselyExample from '../../../../examples/payouts-kysely.js';
import * as mysqlExample from '../../../../examples/payouts-mysql2.js';
import * as pgExample from '../../../../examples/payouts-pg.js';
import * as postgresJsExample from '../../../../examples/payouts-postgres-js.js';
import * as prismaExample from '../../../../examples/payouts-prisma.js';
import * as sqliteExample from '../../../../examples/payouts-sqlite.js';
import { MemoryRateLimiter, MemoryTokenStore, MyrGateway } from '../../../../src/index.js';
import type { PayoutDrainReport } from '../../../../src/sql/index.js';
import { createMockGateway } from '../../../../src/testing/index.js';
import { signCallback, type WebhookHandler } from '../../../../src/webhooks/index.js';
import { MariadbServer } from '../../../helpers/mariadb.js';
import { PostgresServer } from '../../../helpers/postgres.js';
import { generatePrismaClient, removePrismaClients } from '../../../helpers/prisma.js';

const EXAMPLES = resolve(import.meta.dirname, '../../../../examples');
const mock = createMockGateway();
let postgres: PostgresServer;
let mariadb: MariadbServer;
let pgPool: pg.Pool;
let mysqlPool: mysql.Pool;
let dir: string;
let sqlite: DatabaseSync;
let sql: postgresJs.Sql;
let prisma: prismaExample.ShopPrisma & { $disconnect(): Promise<void> };

/** The models examples/payouts-prisma.ts shows in its comment: the client is generated from them. */
const PRISMA_MODELS = /```prisma\n([^`]*)```/
  .exec(readFileSync(join(EXAMPLES, 'payouts-prisma.ts'), 'utf8'))?.[1]
  ?.replace(/^ \* ?/gm, '');
const PRISMA_VARIANT = '-payouts-examples';
type PrismaModule = {
  PrismaClient: new (options: { adapter: unknown }) => prismaExample.ShopPrisma & { $disconnect(): Promise<void> };
};

const TABLES = [
  'CREATE TABLE wallets (seller VARCHAR(40) PRIMARY KEY, balance DECIMAL(12, 2) NOT NULL)',
  'CREATE TABLE seller_payouts (reference_id VARCHAR(100) PRIMARY KEY, seller VARCHAR(40) NOT NULL, amount DECIMAL(12, 2) NOT NULL, status VARCHAR(16) NOT NULL)',
];

beforeAll(async () => {
  mock.listen();
  let generated: PrismaModule;
  [generated, postgres, mariadb] = await Promise.all([
    import(
      generatePrismaClient('postgresql', { models: PRISMA_MODELS ?? '', variant: PRISMA_VARIANT })
    ) as Promise<PrismaModule>,
    PostgresServer.start(),
    MariadbServer.start(),
  ]);
  pgPool = new pg.Pool({ connectionString: postgres.url });
  sql = postgresJs(postgres.url, { onnotice: () => undefined });
  prisma = new generated.PrismaClient({ adapter: new PrismaPg({ connectionString: postgres.url }) });
  mysqlPool = mysql.createPool({ ...mariadb.options });
  dir = mkdtempSync(join(tmpdir(), 'myr-payouts-examples-'));
  sqlite = new DatabaseSync(join(dir, 'shop.db'));
  sqlite.exec('PRAGMA journal_mode = WAL');
  for (const table of TABLES) {
    await pgPool.query(table);
    await mysqlPool.query(table);
    sqlite.exec(table);
  }
}, 60_000);
afterEach(() => mock.reset());
afterAll(async () => {
  mock.close();
  await sql?.end({ timeout: 1 });
  await prisma?.$disconnect();
  await pgPool?.end();
  await mysqlPool?.end();
  sqlite?.close();
  await Promise.all([postgres?.destroy(), mariadb?.destroy()]);
  if (dir) rmSync(dir, { recursive: true, force: true });
  removePrismaClients(PRISMA_VARIANT);
});

interface Shop {
  readonly name: string;
  /** What every example builds: the payout, the receiver, the worker, the outbox. */
  readonly example: () => Promise<{
    payOut: (request: pgExample.PayoutRequest) => Promise<void>;
    handler: WebhookHandler;
    worker: { drain(): Promise<PayoutDrainReport> };
    payouts: { get(referenceId: string): Promise<unknown> };
  }>;
  readonly query: (sql: string, params: unknown[]) => Promise<Record<string, unknown>[]>;
}
const gateway = () =>
  new MyrGateway({
    baseUrl: mock.baseUrl,
    ...mock.merchant,
    tokenStore: new MemoryTokenStore(),
    rateLimiter: new MemoryRateLimiter(),
  });
/** A query with `?` placeholders, on the Postgres database every Postgres shop shares. */
const pgQuery = async (text: string, params: unknown[]) =>
  (
    await pgPool.query(
      text.replace(/\?/g, (_, i: number) => `$${text.slice(0, i).split('?').length}`),
      params,
    )
  ).rows;
const SHOPS: Shop[] = [
  {
    name: 'examples/payouts-pg.ts',
    example: () => pgExample.createPayouts(pgPool, gateway(), mock.merchant.apiKey),
    query: pgQuery,
  },
  {
    name: 'examples/payouts-postgres-js.ts',
    example: () => postgresJsExample.createPayouts(sql, gateway(), mock.merchant.apiKey),
    query: pgQuery,
  },
  {
    name: 'examples/payouts-kysely.ts',
    example: () =>
      kyselyExample.createPayouts(
        new Kysely<kyselyExample.ShopDatabase>({ dialect: new PostgresDialect({ pool: pgPool }) }),
        gateway(),
        mock.merchant.apiKey,
      ),
    query: pgQuery,
  },
  {
    name: 'examples/payouts-drizzle.ts',
    example: () => drizzleExample.createPayouts(drizzle(pgPool), gateway(), mock.merchant.apiKey),
    query: pgQuery,
  },
  {
    name: 'examples/payouts-prisma.ts',
    example: () => prismaExample.createPayouts(prisma, gateway(), mock.merchant.apiKey),
    query: pgQuery,
  },
  {
    name: 'examples/payouts-mysql2.ts',
    example: () => mysqlExample.createPayouts(mysqlPool, gateway(), mock.merchant.apiKey),
    query: async (sql, params) => (await mysqlPool.query<RowDataPacket[]>(sql, params))[0],
  },
  {
    name: 'examples/payouts-sqlite.ts',
    example: () => sqliteExample.createPayouts(join(dir, 'shop.db'), gateway(), mock.merchant.apiKey),
    query: async (sql, params) => sqlite.prepare(sql).all(...(params as string[])),
  },
];

it('every examples/payouts-*.ts is a shop here, and the Prisma one shows its models', () => {
  const examples = readdirSync(EXAMPLES).filter((file) => /^payouts-.*\.ts$/.test(file));
  expect(SHOPS.map((shop) => shop.name).sort()).toEqual(examples.map((file) => `examples/${file}`).sort());
  expect(PRISMA_MODELS).toMatch(/model Wallet \{.*model SellerPayout \{/s);
});

let n = 0;
describe.each(SHOPS)('$name', (shop) => {
  async function seller(balance: string) {
    const name = `seller${++n}`;
    if (shop.name.includes('sqlite')) sqlite.prepare('INSERT INTO wallets VALUES (?, ?)').run(name, balance);
    else await shop.query('INSERT INTO wallets (seller, balance) VALUES (?, ?)', [name, balance]);
    const balanceOf = async () =>
      Number((await shop.query('SELECT balance FROM wallets WHERE seller = ?', [name]))[0]?.balance);
    const statusOf = async (referenceId: string) =>
      (await shop.query('SELECT status FROM seller_payouts WHERE reference_id = ?', [referenceId]))[0]?.status;
    return { name, balanceOf, statusOf };
  }
  const request = (name: string, amount = '250.00') => ({
    seller: name,
    amount,
    referenceId: `PAYOUT${Date.now()}${++n}`,
    bankCode: 'PBBEMYKL',
    accountNumber: '5140123456789',
    accountName: 'Tan Wei Ming',
  });
  async function callback(handler: WebhookHandler, referenceId: string, status: string) {
    const { rawBody, headers } = await signCallback(mock.merchant.apiKey, {
      payment_id: mock.getWithdrawal(referenceId)?.payment_id ?? '',
      reference_id: referenceId,
      amount: 250,
      status,
      transaction_type: 'WITHDRAWAL',
    });
    return (await handler.handle({ body: rawBody, headers })).status;
  }

  it('debits and sends once; a FAILED callback delivered twice credits the seller back once', async () => {
    const { payOut, worker, handler } = await shop.example();
    const { name, balanceOf, statusOf } = await seller('1000.00');
    const payout = request(name);
    await payOut(payout);
    expect(await balanceOf()).toBe(750);
    expect(await worker.drain()).toMatchObject({ sent: 1 });
    expect(mock.getWithdrawal(payout.referenceId)).toMatchObject({ amount: 250 });
    expect(await callback(handler, payout.referenceId, 'FAILED')).toBe(200);
    expect(await callback(handler, payout.referenceId, 'FAILED')).toBe(200);
    expect(await balanceOf()).toBe(1000);
    expect(await statusOf(payout.referenceId)).toBe('failed');
  });

  it('a refused payout is credited back; a debit the balance cannot cover stages nothing', async () => {
    const { payOut, worker, payouts } = await shop.example();
    const { name, balanceOf, statusOf } = await seller('300.00');
    const payout = request(name);
    await payOut(payout);
    mock.fault({ endpoint: 'withdraw', response: { type: 'status', status: 400, code: 'INVALID_BANK_CODE' } });
    expect(await worker.drain()).toMatchObject({ refused: 1 });
    expect(await balanceOf()).toBe(300);
    expect(await statusOf(payout.referenceId)).toBe('refused');
    const tooMuch = request(name, '500.00');
    await expect(payOut(tooMuch)).rejects.toThrow(/short of 500.00/);
    expect(await payouts.get(tooMuch.referenceId)).toBeUndefined();
    expect(await balanceOf()).toBe(300);
  });
});
