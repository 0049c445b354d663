/**
 * The SQL ledger through the public webhooks entry, as a merchant wires it: createWebhookHandler
 * and runOnce with `store: ledger`, the merchant's order write through `tx`. On real Postgres
 * (node-postgres, postgres.js), MariaDB (mysql2) and SQLite: what the gateway is answered and how many times
 * the order was fulfilled.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomUUID } from 'node:crypto';
import { DatabaseSync } from 'node:sqlite';
import mysql from 'mysql2/promise';
import pg from 'pg';
import postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { SqlLedger, fromMysql2, fromPg, fromPostgresJs, fromSqlite, type SqlClient } from '../../../src/sql/index.js';
import { createWebhookHandler, paymentKey, runOnce, signCallback } from '../../../src/webhooks/index.js';
import { MariadbServer } from '../../helpers/mariadb.js';
import { PostgresServer } from '../../helpers/postgres.js';

const API_KEY = 'sk_test_ledger_webhooks_01';
let postgresServer: PostgresServer;
let mariadb: MariadbServer;
let dir: string;
let pgPool: pg.Pool;
let postgresJs: postgres.Sql;
/** Called once postgres.js has seen one of its connections close. */
const postgresJsClosed = new Set<() => void>();
let mysqlPool: mysql.Pool;
let sqliteReader: DatabaseSync;

beforeAll(async () => {
  [postgresServer, mariadb] = await Promise.all([PostgresServer.start(), MariadbServer.start()]);
  pgPool = new pg.Pool({ connectionString: postgresServer.url, max: 10 });
  pgPool.on('error', () => undefined); // idle clients die with the server in the outage test
  await pgPool.query('CREATE TABLE orders (reference_id TEXT NOT NULL)');
  postgresJs = postgres(postgresServer.url, {
    max: 10,
    onnotice: () => undefined,
    onclose: () => postgresJsClosed.forEach((closed) => closed()),
  });
  mysqlPool = mysql.createPool({ ...mariadb.options, connectionLimit: 10 });
  await mysqlPool.query('CREATE TABLE orders (reference_id VARCHAR(100) NOT NULL)');
  dir = mkdtempSync(join(tmpdir(), 'myr-ledger-webhooks-'));
  const setup = new DatabaseSync(join(dir, 'shop.db'));
  setup.exec('PRAGMA journal_mode = WAL; CREATE TABLE orders (reference_id TEXT NOT NULL)');
  setup.close();
  sqliteReader = new DatabaseSync(join(dir, 'shop.db'), { readOnly: true });
}, 60_000);
afterAll(async () => {
  await pgPool?.end();
  await postgresJs?.end({ timeout: 1 });
  await mysqlPool?.end();
  sqliteReader?.close();
  await postgresServer?.destroy();
  await mariadb?.destroy();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

interface Shop<Tx> {
  client: () => SqlClient<Tx>;
  /** The merchant's fulfilment, through the ledger's transaction. */
  fulfil(tx: Tx, referenceId: string): Promise<void>;
  /** Fulfilments of an order, read on another connection. */
  fulfilments(referenceId: string): Promise<number>;
  outage?: { stop(): Promise<void>; start(): Promise<void> };
  /**
   * Postgres: the server ends the session of `tx`'s connection (pg_terminate_backend), as a
   * failover, an admin or `idle_in_transaction_session_timeout` would; settles once the client
   * has seen its connection close.
   */
  endSession?(tx: Tx): Promise<void>;
  /** Takes every connection of the ledger's pool (other requests hold them); answers how to give them back. */
  exhaust?(): Promise<() => void>;
}

/** Checks out `count` connections, and answers how to give them all back. */
async function holdAll<C>(count: number, take: () => Promise<C>, give: (connection: C) => void): Promise<() => void> {
  const held = await Promise.all(Array.from({ length: count }, take));
  return () => held.forEach(give);
}

const terminate = async (pid: unknown) => void (await pgPool.query('SELECT pg_terminate_backend($1)', [pid]));

/** Ends a session, and settles once `seen` (registered before the end) settled. */
async function endSeen(pid: unknown, seen: Promise<unknown>): Promise<void> {
  await terminate(pid);
  await seen;
}

handlerScenarios('node-postgres', {
  client: () => fromPg(pgPool),
  fulfil: async (tx, referenceId) =>
    void (await tx.query('INSERT INTO orders (reference_id) VALUES ($1)', [referenceId])),
  fulfilments: async (referenceId) =>
    Number((await pgPool.query('SELECT count(*) AS n FROM orders WHERE reference_id = $1', [referenceId])).rows[0].n),
  outage: { stop: () => postgresServer.stop(), start: () => postgresServer.start() },
  endSession: async (tx) => {
    const pid = (await tx.query('SELECT pg_backend_pid() AS pid')).rows[0].pid;
    await endSeen(pid, new Promise((resolve) => tx.once('end', resolve)));
  },
  exhaust: () =>
    holdAll(
      10,
      () => pgPool.connect(),
      (client) => client.release(),
    ),
});
handlerScenarios('postgres.js', {
  client: () => fromPostgresJs(postgresJs),
  fulfil: async (tx, referenceId) => void (await tx`INSERT INTO orders (reference_id) VALUES (${referenceId})`),
  fulfilments: async (referenceId) =>
    Number((await pgPool.query('SELECT count(*) AS n FROM orders WHERE reference_id = $1', [referenceId])).rows[0].n),
  outage: { stop: () => postgresServer.stop(), start: () => postgresServer.start() },
  endSession: async (tx) => {
    const pid = (await tx`SELECT pg_backend_pid() AS pid`)[0]?.pid;
    let closed!: () => void;
    const seen = new Promise<void>((resolve) => postgresJsClosed.add((closed = resolve)));
    await endSeen(pid, seen).finally(() => postgresJsClosed.delete(closed));
  },
  exhaust: () =>
    holdAll(
      10,
      () => postgresJs.reserve(),
      (reserved) => reserved.release(),
    ),
});
handlerScenarios('mysql2 (MariaDB)', {
  client: () => fromMysql2(mysqlPool),
  fulfil: async (tx, referenceId) =>
    void (await tx.query('INSERT INTO orders (reference_id) VALUES (?)', [referenceId])),
  fulfilments: async (referenceId) =>
    Number(
      (
        await mysqlPool.query<mysql.RowDataPacket[]>('SELECT count(*) AS n FROM orders WHERE reference_id = ?', [
          referenceId,
        ])
      )[0][0]?.n,
    ),
  outage: { stop: () => mariadb.stop(), start: () => mariadb.start() },
  endSession: async (tx) => {
    const [rows] = await tx.query<mysql.RowDataPacket[]>('SELECT CONNECTION_ID() AS id');
    const seen = new Promise((resolve) => tx.connection.once('end', resolve));
    await mysqlPool.query(`KILL ${Number(rows[0]?.id)}`);
    await seen;
  },
  exhaust: () =>
    holdAll(
      10,
      () => mysqlPool.getConnection(),
      (connection) => connection.release(),
    ),
});
handlerScenarios('node:sqlite', {
  // A scenario here holds a run 3 s, past SQLite's default cap (sqlite/one-writer.test.ts tests that).
  client: () => fromSqlite(join(dir, 'shop.db'), { maxRunMs: 10_000 }),
  fulfil: async (tx, referenceId) => void tx.prepare('INSERT INTO orders (reference_id) VALUES (?)').run(referenceId),
  fulfilments: async (referenceId) =>
    Number(sqliteReader.prepare('SELECT count(*) AS n FROM orders WHERE reference_id = ?').get(referenceId)?.n),
});

async function delivery(status: string, paymentId = `PAY_${randomUUID()}`) {
  const referenceId = `ORDER_${paymentId}`;
  const { rawBody, headers } = await signCallback(API_KEY, {
    payment_id: paymentId,
    reference_id: referenceId,
    amount: 50,
    status,
  });
  return { paymentId, referenceId, request: { body: rawBody, headers } };
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** A delivery sent again as the gateway retries a 503: up to five more times while the answer is 503. */
async function asTheGatewayRetries<A extends { readonly status: number }>(deliver: () => Promise<A>): Promise<A> {
  let answer = await deliver();
  for (let retry = 0; retry < 5 && answer.status === 503; retry++) answer = await deliver();
  return answer;
}

function handlerScenarios<Tx>(name: string, shop: Shop<Tx>): void {
  describe(`the webhook handler on the SQL ledger, ${name}`, () => {
    async function receiver(
      options: {
        lockTimeoutMs?: number;
        handlerTimeoutMs?: number;
        behaviour?: (referenceId: string, tx: Tx) => Promise<unknown>;
      } = {},
    ) {
      const ledger = new SqlLedger(shop.client(), {
        table: `hooks_${randomUUID().replaceAll('-', '').slice(0, 12)}`,
        lockTimeoutMs: options.lockTimeoutMs,
      });
      await ledger.ensureSchema();
      const ran: string[] = [];
      const handler = createWebhookHandler({
        verifier: { apiKey: API_KEY },
        store: ledger,
        handlerTimeoutMs: options.handlerTimeoutMs,
        onEvent: async (event, { tx }) => {
          ran.push(event.signed.payment_id);
          await shop.fulfil(tx, event.signed.reference_id);
          await options.behaviour?.(event.signed.reference_id, tx);
        },
      });
      return { ledger, handler, ran };
    }

    it('a callback is fulfilled once: 200 processed, then 200 duplicate without running the handler', async () => {
      const { handler, ran } = await receiver();
      const { request, referenceId } = await delivery('SUCCESS');
      expect(await handler.handle(request)).toMatchObject({ status: 200, body: { outcome: 'processed' } });
      expect(await handler.handle(request)).toMatchObject({ status: 200, body: { outcome: 'duplicate' } });
      expect(ran).toHaveLength(1);
      expect(await shop.fulfilments(referenceId)).toBe(1);
    });

    it('a handler that throws: 500 with nothing of its writes committed; the retry fulfils once', async () => {
      let failing = true;
      const { handler } = await receiver({
        behaviour: async () => {
          if (failing) throw new Error('the warehouse API is down');
        },
      });
      const { request, referenceId } = await delivery('SUCCESS');
      expect((await handler.handle(request)).status).toBe(500);
      expect(await shop.fulfilments(referenceId)).toBe(0);
      failing = false;
      expect((await handler.handle(request)).status).toBe(200);
      expect(await shop.fulfilments(referenceId)).toBe(1);
    });

    it('a handler that outlives handlerTimeoutMs: 503, rolled back, never committed after the answer', async () => {
      let release!: () => void;
      const settled = new Promise<void>((resolve) => (release = resolve));
      const { handler } = await receiver({ handlerTimeoutMs: 100, behaviour: () => settled });
      const { request, referenceId } = await delivery('SUCCESS');
      expect(await handler.handle(request)).toMatchObject({
        status: 503,
        headers: { 'retry-after': expect.any(String) },
      });
      release();
      await sleep(100);
      expect(await shop.fulfilments(referenceId)).toBe(0);
    });

    it('a duplicate while the first holds its transaction for 3 s: 409 with Retry-After, the handler not run', async () => {
      let started!: () => void;
      const running = new Promise<void>((resolve) => (started = resolve));
      const { handler, ran } = await receiver({ behaviour: async () => (started(), sleep(3000)) });
      const { request, referenceId } = await delivery('SUCCESS');
      const first = handler.handle(request);
      await running;
      const duplicate = await handler.handle(request);
      expect(duplicate).toMatchObject({ status: 409, headers: { 'retry-after': expect.any(String) } });
      expect((await first).status).toBe(200);
      expect(ran).toHaveLength(1);
      expect(await shop.fulfilments(referenceId)).toBe(1);
    }, 15_000);

    it('REFUNDED then SUCCESS: the SUCCESS is superseded, through the handler and through runOnce', async () => {
      const { handler, ledger, ran } = await receiver();
      const refunded = await delivery('REFUNDED');
      expect((await handler.handle(refunded.request)).status).toBe(200);
      const success = await delivery('SUCCESS', refunded.paymentId);
      expect(await handler.handle(success.request)).toMatchObject({ status: 200, body: { outcome: 'superseded' } });
      let reconciled = false;
      const viaRunOnce = await runOnce(
        ledger,
        paymentKey(refunded.paymentId, 'SUCCESS'),
        () => void (reconciled = true),
        { payment: { payment_id: refunded.paymentId, status: 'SUCCESS' } },
      );
      expect(viaRunOnce).toEqual({ outcome: 'superseded' });
      expect(reconciled).toBe(false);
      expect(ran).toEqual([refunded.paymentId]);
    });

    it('runOnce and the handler share the ledger: a reconciliation after the callback does not fulfil again', async () => {
      const { handler, ledger } = await receiver();
      const { request, paymentId, referenceId } = await delivery('SUCCESS');
      expect((await handler.handle(request)).status).toBe(200);
      const reconciled = await runOnce(
        ledger,
        paymentKey(paymentId, 'SUCCESS'),
        ({ tx }) => shop.fulfil(tx, referenceId),
        { payment: { payment_id: paymentId, status: 'SUCCESS' } },
      );
      expect(reconciled).toEqual({ outcome: 'duplicate' });
      expect(await shop.fulfilments(referenceId)).toBe(1);
    });

    it('runOnce given a paymentKey alone keeps the payment for good: its callback resent 25 h later, after the daily prune, is a duplicate', async () => {
      const { handler, ledger, ran } = await receiver();
      const paymentId = `PAY_${randomUUID()}`;
      const referenceId = `ORDER_${paymentId}`;
      // No `payment` option: the key is paymentKey's, and says whose outcome it is.
      const reconciled = await runOnce(ledger, paymentKey(paymentId, 'SUCCESS'), ({ tx }) =>
        shop.fulfil(tx, referenceId),
      );
      expect(reconciled.outcome).toBe('processed');
      // The resend is signed when it is sent, fresh to the verifier (whose clock is the one it was
      // built with); the ledger and prune read Date.now, 25 h on.
      const resend = await delivery('SUCCESS', paymentId);
      vi.useFakeTimers({ toFake: ['Date'], now: Date.now() + 25 * 3_600_000 });
      try {
        await ledger.prune();
        expect(await handler.handle(resend.request)).toMatchObject({ status: 200, body: { outcome: 'duplicate' } });
      } finally {
        vi.useRealTimers();
      }
      expect(ran).toEqual([]);
      expect(await shop.fulfilments(referenceId)).toBe(1);
    });

    if (shop.exhaust) {
      it('every connection of the pool busy: 503 within handlerTimeoutMs, the handler not run; once one is free the retry is handled once', async () => {
        const { handler, ran } = await receiver({ handlerTimeoutMs: 300 });
        const { request, referenceId } = await delivery('SUCCESS');
        const giveBack = await shop.exhaust!();
        const busy = await handler.handle(request).finally(giveBack);
        expect(busy).toMatchObject({
          status: 503,
          body: { outcome: 'unavailable' },
          headers: { 'retry-after': expect.any(String) },
        });
        expect(ran).toEqual([]);
        // The gateway's retries: on a loaded machine one may again find no connection within 300 ms.
        const answer = await asTheGatewayRetries(() => handler.handle(request));
        expect(answer).toMatchObject({ status: 200, body: { outcome: 'processed' } });
        expect(await shop.fulfilments(referenceId)).toBe(1);
      });
    }

    if (shop.endSession) {
      // The handler's write went through; the session ends while the handler is busy elsewhere
      // (an HTTP call), and the ledger's COMMIT meets a connection its client already knows dead.
      it("the server ends the transaction's session under the handler: answered, nothing committed; the retry fulfils once", async () => {
        let ending = true;
        const { handler } = await receiver({
          behaviour: async (_referenceId, tx) => {
            if (!ending) return;
            ending = false;
            await shop.endSession!(tx);
          },
        });
        const { request, referenceId } = await delivery('SUCCESS');
        expect([500, 503]).toContain((await handler.handle(request)).status);
        expect(await shop.fulfilments(referenceId)).toBe(0);
        // The connection died with its session: the gateway's next retries meet a fresh one.
        const answer = await asTheGatewayRetries(() => handler.handle(request));
        expect(answer).toMatchObject({ status: 200, body: { outcome: 'processed' } });
        expect(await shop.fulfilments(referenceId)).toBe(1);
      });
    }

    if (shop.outage) {
      it('the database stopped: 503, nothing acknowledged; started again: the next delivery is handled once', async () => {
        const { handler } = await receiver();
        const { request, referenceId } = await delivery('SUCCESS');
        await shop.outage!.stop();
        // Started again whatever happens, so that a failure here does not take the next tests down too.
        const down = await handler.handle(request).finally(() => shop.outage!.start());
        expect(down.status).toBe(503);
        // Connections of the pool died with the server: the gateway's next retries meet a fresh one.
        const answer = await asTheGatewayRetries(() => handler.handle(request));
        expect(answer).toMatchObject({ status: 200, body: { outcome: 'processed' } });
        expect(await shop.fulfilments(referenceId)).toBe(1);
      }, 30_000);
    }
  });
}
