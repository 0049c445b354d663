/**
 * One receiver process: a webhook handler on the SQL ledger, as a merchant wires it.
 * `{ type: 'deliver', payment }` hands it one signed delivery of the payment's SUCCESS callback
 * (the merchant's fulfilment is one row in `fulfilments`, written through `tx` in `onEvent`) and
 * answers the handler's outcome; `{ type: 'start', payment }` answers once the
 * fulfilment row is written and never lets the transaction finish (the parent then kills the
 * process before COMMIT). `{ type: 'ensure-schema', at, table }` creates the table (another than the
 * worker's own, given `table`) at that instant.
 */
import mysql from 'mysql2/promise';
import pg from 'pg';
import postgres from 'postgres';
import { SqlLedger, fromMysql2, fromPg, fromPostgresJs, fromSqlite } from '../../src/sql/index.js';
import { Redis } from 'ioredis';
import { RedisWebhookStore } from '../../src/redis/index.js';
import { createWebhookHandler, paymentKey, runOnce, signCallback } from '../../src/webhooks/index.js';
import { serveRequests, workerEnv } from './pool.js';

type Fulfil = (payment: string) => Promise<void>;
interface Receiver {
  run(payment: string, afterWrite: () => Promise<void>): Promise<string>;
  ensureSchema(): Promise<void>;
  /** Opens the connections ensureSchema needs, so that 4 processes then run it at the same instant. */
  warm(): Promise<unknown>;
}

const API_KEY = 'sk_test_ledger_fleet_01';

function receiver<Tx>(
  ledger: SqlLedger<Tx>,
  fulfil: (tx: Tx, payment: string) => Promise<void>,
  warm: () => Promise<unknown>,
): Receiver {
  // What onEvent does after the fulfilment write, per payment (the kill test holds it forever).
  const afterWrites = new Map<string, () => Promise<void>>();
  const handler = createWebhookHandler({
    verifier: { apiKey: API_KEY },
    store: ledger,
    onEvent: async (event, { tx }) => {
      await fulfil(tx, event.signed.payment_id);
      await afterWrites.get(event.signed.payment_id)?.();
    },
  });
  return {
    async run(payment, afterWrite) {
      afterWrites.set(payment, afterWrite);
      // The gateway's delivery: a callback signed now (each delivery has its own timestamp).
      const { rawBody, headers } = await signCallback(API_KEY, {
        payment_id: payment,
        reference_id: `ORDER_${payment}`,
        amount: 10,
        status: 'SUCCESS',
      });
      return (await handler.handle({ body: rawBody, headers })).body.outcome;
    },
    ensureSchema: () => ledger.ensureSchema(),
    warm,
  };
}

const url = workerEnv('DATABASE_URL');
// One pool per process, whatever the number of ledger tables it is asked about.
let pgPool: pg.Pool | undefined;
let postgresJs: postgres.Sql | undefined;
let mysqlPool: mysql.Pool | undefined;
const kind = workerEnv('CLIENT_KIND');
function connect(table: string): Receiver {
  switch (kind) {
    case 'pg': {
      const pool = (pgPool ??= new pg.Pool({ connectionString: url, max: 10 }));
      return receiver(
        new SqlLedger(fromPg(pool), { table }),
        async (tx, payment) => void (await tx.query('INSERT INTO fulfilments (payment_id) VALUES ($1)', [payment])),
        () => pool.query('SELECT 1'),
      );
    }
    case 'postgres.js': {
      const sql = (postgresJs ??= postgres(url, { max: 10, onnotice: () => undefined }));
      return receiver(
        new SqlLedger(fromPostgresJs(sql), { table }),
        async (tx, payment) => void (await tx`INSERT INTO fulfilments (payment_id) VALUES (${payment})`),
        async () => sql`SELECT 1`,
      );
    }
    case 'mysql2': {
      const pool = (mysqlPool ??= mysql.createPool({ uri: url, connectionLimit: 10 }));
      return receiver(
        new SqlLedger(fromMysql2(pool), { table }),
        async (tx, payment) => void (await tx.query('INSERT INTO fulfilments (payment_id) VALUES (?)', [payment])),
        () => pool.query('SELECT 1'),
      );
    }
    case 'sqlite':
      return receiver(
        new SqlLedger(fromSqlite(url), { table }),
        async (tx, payment) => void tx.prepare('INSERT INTO fulfilments (payment_id) VALUES (?)').run(payment),
        async () => undefined,
      );
    case 'redis-store+pg': {
      // The comparison: the claim in Redis, the merchant's write on its own pg connection
      // (autocommit), the completion a third step. Claims last 1 s so the test need not wait 30 s.
      const pool = (pgPool ??= new pg.Pool({ connectionString: url, max: 10 }));
      const store = new RedisWebhookStore({ client: new Redis(workerEnv('REDIS_URL')) });
      return {
        async run(payment, afterWrite) {
          const run = await runOnce(
            store,
            paymentKey(payment, 'SUCCESS'),
            async () => {
              await pool.query('INSERT INTO fulfilments (payment_id) VALUES ($1)', [payment]);
              await afterWrite();
            },
            { inFlightTtlMs: 1000, payment: { payment_id: payment, status: 'SUCCESS' } },
          );
          return run.outcome;
        },
        ensureSchema: async () => undefined,
        warm: () => pool.query('SELECT 1'),
      };
    }
    default:
      throw new Error(`unknown CLIENT_KIND ${kind}`);
  }
}

const ledger = connect(workerEnv('LEDGER_TABLE'));
const forever = new Promise<void>(() => undefined);
const noWait: Fulfil = async () => undefined;

serveRequests(async (message) => {
  if (message.type === 'warm') return ledger.warm();
  if (message.type === 'ensure-schema') {
    // Given `at`: all the receivers run it at that instant, as 4 pods starting together would.
    if (typeof message.at === 'number')
      await new Promise((resolve) => setTimeout(resolve, Math.max(0, Number(message.at) - Date.now())));
    return (typeof message.table === 'string' ? connect(message.table) : ledger).ensureSchema();
  }
  const payment = String(message.payment);
  if (message.type === 'start') {
    let written!: () => void;
    const started = new Promise<void>((resolve) => (written = resolve));
    void ledger.run(payment, () => (written(), forever));
    await started;
    return { started: true };
  }
  return ledger.run(payment, () => noWait(payment));
});
