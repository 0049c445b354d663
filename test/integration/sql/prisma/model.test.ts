/**
 * The Prisma model block of docs/ledger.md ("The ledger's table in your Prisma schema"), pasted
 * into a merchant's schema (on MySQL with the index's `map` the docs say): Prisma 7 generates a
 * client from it (offline), the ledger's table is made by docs/migrations/<dialect>.sql on a
 * real PostgreSQL 15 and MariaDB 10.11, the webhook handler runs the ledger through that client
 * (processed once, the resend a duplicate), and the model reads the ledger's rows: its names,
 * `@@map` and types are the table's.
 */
import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { PrismaMariaDb } from '@prisma/adapter-mariadb';
import { PrismaPg } from '@prisma/adapter-pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fromPrisma, SqlLedger } from '../../../../src/sql/index.js';
import { signCallback } from '../../../../src/testing/index.js';
import { createWebhookHandler } from '../../../../src/webhooks/index.js';
import { MariadbServer } from '../../../helpers/mariadb.js';
import { PostgresServer } from '../../../helpers/postgres.js';
import { generatePrismaClient, removePrismaClients } from '../../../helpers/prisma.js';

const ROOT = resolve(import.meta.dirname, '../../../..');
const API_KEY = 'sk_test_prisma_model_01';

/** The ```prisma block under the docs' heading, as a merchant copies it. */
function modelBlock(): string {
  const doc = readFileSync(join(ROOT, 'docs/ledger.md'), 'utf8');
  const section = doc.slice(doc.indexOf("### The ledger's table in your Prisma schema"));
  const block = /```prisma\n([\s\S]*?)\n```/.exec(section)?.[1];
  if (block === undefined)
    throw new Error('docs/ledger.md has no prisma block under "The ledger\'s table in your Prisma schema"');
  return block;
}

interface LedgerRow {
  ledger_key: string;
  mark_rank: number | null;
  handled_statuses: number;
  expires_at: bigint;
  claim_id: bigint | null;
}
interface GeneratedClient {
  myrWebhookLedger: { findMany(): Promise<LedgerRow[]> };
  fulfilment: { count(args: { where: { payment_id: string } }): Promise<number> };
  $executeRawUnsafe(query: string): Promise<number>;
  $disconnect(): Promise<void>;
}

let postgres: PostgresServer;
let mariadb: MariadbServer;
const clients: Partial<Record<'postgresql' | 'mysql', GeneratedClient>> = {};
type Generated = { PrismaClient: new (options: { adapter: unknown }) => GeneratedClient };

/** Runs a migration file's statements (comments dropped) through the client. */
async function migrate(prisma: GeneratedClient, dialect: 'postgres' | 'mysql'): Promise<void> {
  for (const statement of readFileSync(join(ROOT, 'docs/migrations', `${dialect}.sql`), 'utf8')
    .split(';')
    .map((s) => s.replace(/^--.*$/gm, '').trim())) {
    if (statement !== '') await prisma.$executeRawUnsafe(statement);
  }
}

beforeAll(async () => {
  const [pgModule, mysqlModule] = await Promise.all([
    import(
      generatePrismaClient('postgresql', { models: `\n${modelBlock()}\n`, variant: '-ledger-model' })
    ) as Promise<Generated>,
    // On MySQL the docs say: the index's map is the ledger's own name there.
    import(
      generatePrismaClient('mysql', {
        models: `\n${modelBlock().replace('map: "myr_webhook_ledger_expires"', 'map: "expires_at_idx"')}\n`,
        variant: '-ledger-model',
      })
    ) as Promise<Generated>,
  ]);
  [postgres, mariadb] = await Promise.all([PostgresServer.start(), MariadbServer.start()]);
  clients.postgresql = new pgModule.PrismaClient({ adapter: new PrismaPg({ connectionString: postgres.url, max: 4 }) });
  await clients.postgresql.$executeRawUnsafe(
    'CREATE TABLE fulfilments (id SERIAL PRIMARY KEY, payment_id TEXT NOT NULL)',
  );
  await migrate(clients.postgresql, 'postgres');
  const { host, port, user, database } = mariadb.options;
  clients.mysql = new mysqlModule.PrismaClient({
    adapter: new PrismaMariaDb({ host, port, user, database, connectionLimit: 4 }),
  });
  await clients.mysql.$executeRawUnsafe(
    'CREATE TABLE fulfilments (id INT AUTO_INCREMENT PRIMARY KEY, payment_id VARCHAR(100) NOT NULL)',
  );
  await migrate(clients.mysql, 'mysql');
}, 120_000);
afterAll(async () => {
  await Promise.all(Object.values(clients).map((client) => client.$disconnect()));
  await Promise.all([postgres?.destroy(), mariadb?.destroy()]);
  removePrismaClients('-ledger-model');
});

describe.each(['postgresql', 'mysql'] as const)('%s', (provider) => {
  it('the client generated with the docs’ model runs the ledger, and the model reads its rows', async () => {
    const prisma = clients[provider] as GeneratedClient;
    const handler = createWebhookHandler({
      verifier: { apiKey: API_KEY },
      store: new SqlLedger(fromPrisma(prisma as unknown as Parameters<typeof fromPrisma>[0])),
      onEvent: async (event, { tx }) =>
        void (await (
          tx as unknown as { fulfilment: { create(args: { data: { payment_id: string } }): Promise<unknown> } }
        ).fulfilment.create({ data: { payment_id: event.signed.payment_id } })),
    });
    const { rawBody, headers } = await signCallback(API_KEY, {
      payment_id: 'PAY_MODEL_1',
      reference_id: 'ORDERMODEL1',
      amount: 50,
      status: 'SUCCESS',
    });
    expect((await handler.handle({ body: rawBody, headers })).body).toMatchObject({ outcome: 'processed' });
    expect((await handler.handle({ body: rawBody, headers })).body).toMatchObject({ outcome: 'duplicate' });
    expect(await prisma.fulfilment.count({ where: { payment_id: 'PAY_MODEL_1' } })).toBe(1);

    // The callback's record, and the payment's row kept for good with SUCCESS's bit (4).
    const rows = await prisma.myrWebhookLedger.findMany();
    expect(rows.map((row) => row.ledger_key).sort()).toEqual(['k:payment:PAY_MODEL_1:SUCCESS', 'm:PAY_MODEL_1']);
    for (const row of rows) expect(row.expires_at > BigInt(Date.now())).toBe(true);
    expect(rows.find((row) => row.ledger_key === 'm:PAY_MODEL_1')).toMatchObject({
      handled_statuses: 4,
      expires_at: BigInt(Number.MAX_SAFE_INTEGER),
    });
  }, 60_000);
});
