/**
 * The SQL ledger across real processes, each a webhook handler on it (ledger-worker.ts): 4 receivers × 100 payments × 4 deliveries of each
 * callback at once leave exactly one fulfilment per payment, and a receiver killed (SIGKILL)
 * after its fulfilment write and before COMMIT costs nothing: the next delivery fulfils once,
 * on another process. On Postgres (node-postgres, postgres.js), MariaDB (mysql2) and one SQLite
 * file shared by the 4 processes.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import mysql from 'mysql2/promise';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MariadbServer } from '../helpers/mariadb.js';
import { PostgresServer } from '../helpers/postgres.js';
import { RedisServer } from '../helpers/redis.js';
import { WorkerPool } from './pool.js';

const RECEIVERS = 4;
const PAYMENTS = 100;
const DELIVERIES = 4;

let postgresServer: PostgresServer;
let mariadb: MariadbServer;
let sqliteDir: string;

beforeAll(async () => {
  [postgresServer, mariadb] = await Promise.all([PostgresServer.start(), MariadbServer.start()]);
  sqliteDir = mkdtempSync(join(tmpdir(), 'myr-ledger-fleet-'));
}, 60_000);
afterAll(async () => {
  await postgresServer?.destroy();
  await mariadb?.destroy();
  if (sqliteDir) rmSync(sqliteDir, { recursive: true, force: true });
});

interface Database {
  readonly url: string;
  /** Empties (or creates) the merchant's fulfilments table. */
  reset(): Promise<void>;
  /** Fulfilment rows per payment id. */
  counts(): Promise<Map<string, number>>;
}

function postgresDatabase(): Database {
  const query = async (text: string) => {
    const client = new pg.Client({ connectionString: postgresServer.url });
    await client.connect();
    try {
      return (await client.query(text)).rows as { payment_id: string; n: string }[];
    } finally {
      await client.end();
    }
  };
  return {
    url: postgresServer.url,
    reset: async () =>
      void (await query('DROP TABLE IF EXISTS fulfilments; CREATE TABLE fulfilments (payment_id TEXT NOT NULL)')),
    counts: async () =>
      new Map(
        (await query('SELECT payment_id, count(*) AS n FROM fulfilments GROUP BY payment_id')).map((row) => [
          row.payment_id,
          Number(row.n),
        ]),
      ),
  };
}

function mariadbDatabase(): Database {
  const { host, port, user, database } = mariadb.options;
  const query = async (text: string) => {
    const connection = await mysql.createConnection({ ...mariadb.options });
    try {
      return (await connection.query<mysql.RowDataPacket[]>(text))[0];
    } finally {
      await connection.end();
    }
  };
  return {
    url: `mysql://${user}@${host}:${port}/${database}`,
    reset: async () => {
      await query('DROP TABLE IF EXISTS fulfilments');
      await query('CREATE TABLE fulfilments (payment_id VARCHAR(100) NOT NULL)');
    },
    counts: async () =>
      new Map(
        (await query('SELECT payment_id, count(*) AS n FROM fulfilments GROUP BY payment_id')).map((row) => [
          String(row.payment_id),
          Number(row.n),
        ]),
      ),
  };
}

function sqliteDatabase(): Database {
  const file = join(sqliteDir, 'shop.db');
  const open = () => new DatabaseSync(file);
  return {
    url: file,
    reset: async () => {
      const db = open();
      db.exec(
        'PRAGMA journal_mode = WAL; DROP TABLE IF EXISTS fulfilments; CREATE TABLE fulfilments (payment_id TEXT NOT NULL)',
      );
      db.close();
    },
    counts: async () => {
      const db = open();
      try {
        const rows = db.prepare('SELECT payment_id, count(*) AS n FROM fulfilments GROUP BY payment_id').all();
        return new Map(rows.map((row) => [String(row.payment_id), Number(row.n)]));
      } finally {
        db.close();
      }
    },
  };
}

const CLIENTS: [string, () => Database][] = [
  ['pg', postgresDatabase],
  ['postgres.js', postgresDatabase],
  ['mysql2', mariadbDatabase],
  ['sqlite', sqliteDatabase],
];

let tables = 0;

describe.each(CLIENTS)('receivers on %s', (kind, database) => {
  let pool: WorkerPool;
  let db: Database;
  beforeAll(async () => {
    db = database();
    await db.reset();
    const table = `fleet_ledger_${++tables}`;
    pool = await WorkerPool.start('./ledger-worker.ts', RECEIVERS, () => ({
      CLIENT_KIND: kind,
      DATABASE_URL: db.url,
      LEDGER_TABLE: table,
    }));
    await pool.workers[0]!.request({ type: 'ensure-schema' });
  }, 60_000);
  afterAll(async () => {
    await pool?.stop();
  });

  /** One delivery, and the gateway's retries while it answers in_flight or unavailable (409/503). */
  async function deliver(to: number, payment: string): Promise<string> {
    for (let attempt = 0; ; attempt++) {
      const outcome = await pool.workers[to]!.request<string>({ type: 'deliver', payment });
      if ((outcome !== 'in_flight' && outcome !== 'unavailable') || attempt === 20) return outcome;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }

  it(`${RECEIVERS} receivers × ${PAYMENTS} payments × ${DELIVERIES} deliveries at once: exactly one fulfilment per payment`, async () => {
    const payments = Array.from({ length: PAYMENTS }, (_, i) => `PAY_FLEET_${kind}_${i}`);
    const outcomes = await Promise.all(
      payments.flatMap((payment) => Array.from({ length: DELIVERIES }, (_, d) => deliver(d % RECEIVERS, payment))),
    );
    const counts = await db.counts();
    expect(payments.filter((payment) => counts.get(payment) !== 1)).toEqual([]);
    expect(outcomes.filter((outcome) => outcome === 'processed')).toHaveLength(PAYMENTS);
    expect(outcomes.filter((outcome) => outcome !== 'processed' && outcome !== 'duplicate')).toEqual([]);
  }, 120_000);

  it('a receiver killed after its fulfilment write and before COMMIT: the next delivery fulfils once, on another process', async () => {
    const payment = `PAY_KILLED_${kind}`;
    await pool.workers[0]!.request({ type: 'start', payment });
    await pool.kill(0);
    expect(await deliver(1, payment)).toBe('processed');
    expect(await deliver(2, payment)).toBe('duplicate');
    expect((await db.counts()).get(payment)).toBe(1);
  }, 60_000);

  // Postgres's CREATE TABLE IF NOT EXISTS races on its catalog (a unique violation of
  // pg_type_typname_nsp_index) when two transactions create one table: several rounds, so the race
  // is met if the ledger does not prevent it.
  it(`ensureSchema from ${RECEIVERS} processes at once on a database without the table: no error`, async () => {
    const fresh = await WorkerPool.start('./ledger-worker.ts', RECEIVERS, () => ({
      CLIENT_KIND: kind,
      DATABASE_URL: db.url,
      LEDGER_TABLE: `fleet_schema_${++tables}`,
    }));
    try {
      await fresh.all({ type: 'warm' });
      for (let round = 0; round < 8; round++) {
        await expect(
          fresh.all({ type: 'ensure-schema', at: Date.now() + 100, table: `fleet_schema_${tables}_${round}` }),
        ).resolves.toHaveLength(RECEIVERS);
      }
      await fresh.all({ type: 'ensure-schema' });
      expect(await fresh.workers[0]!.request({ type: 'deliver', payment: `PAY_SCHEMA_${kind}` })).toBe('processed');
    } finally {
      await fresh.stop();
    }
  }, 60_000);
});

describe('a single server on SQLite, restarted between two deliveries of one callback', () => {
  it('the second delivery is a duplicate and the handler does not run again', async () => {
    const db = sqliteDatabase();
    const env = () => ({ CLIENT_KIND: 'sqlite', DATABASE_URL: db.url, LEDGER_TABLE: 'restart_ledger' });
    const before = await WorkerPool.start('./ledger-worker.ts', 1, env);
    await before.workers[0]!.request({ type: 'ensure-schema' });
    expect(await before.workers[0]!.request({ type: 'deliver', payment: 'PAY_RESTART' })).toBe('processed');
    await before.stop();
    const after = await WorkerPool.start('./ledger-worker.ts', 1, env);
    try {
      expect(await after.workers[0]!.request({ type: 'deliver', payment: 'PAY_RESTART' })).toBe('duplicate');
      expect((await db.counts()).get('PAY_RESTART')).toBe(1);
    } finally {
      await after.stop();
    }
  }, 60_000);
});

// Why the ledger exists: the same crash on RedisWebhookStore, whose claim, the merchant's write (on
// its own connection) and the completion are three separate commits. The write committed, the
// claim expired with the dead process, and the next delivery fulfils the order a second time.
describe('the same kill -9 before completion on RedisWebhookStore, the write on another connection', () => {
  it('fulfils the order twice (the SQL ledger above fulfils it once)', async () => {
    const redis = await RedisServer.start();
    const db = postgresDatabase();
    await db.reset();
    const pool = await WorkerPool.start('./ledger-worker.ts', 2, () => ({
      CLIENT_KIND: 'redis-store+pg',
      DATABASE_URL: db.url,
      LEDGER_TABLE: 'unused',
      REDIS_URL: redis.url,
    }));
    try {
      await pool.workers[0]!.request({ type: 'start', payment: 'PAY_REDIS_KILLED' });
      await pool.kill(0);
      let outcome = '';
      for (let attempt = 0; attempt < 40 && outcome !== 'processed'; attempt++) {
        outcome = await pool.workers[1]!.request<string>({ type: 'deliver', payment: 'PAY_REDIS_KILLED' });
        if (outcome !== 'processed') await new Promise((resolve) => setTimeout(resolve, 100));
      }
      expect(outcome).toBe('processed');
      expect((await db.counts()).get('PAY_REDIS_KILLED')).toBe(2);
    } finally {
      await pool.stop();
      await redis.stop();
    }
  }, 60_000);
});
