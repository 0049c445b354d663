/**
 * The ledger beside the app's own `DatabaseSync`, through the public webhooks entry: the app's
 * writes while a callback's handler awaits never join the callback's transaction (so a handler
 * that fails cannot take them with it), and the handler's writes through `tx` commit once.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomUUID } from 'node:crypto';
import { DatabaseSync } from 'node:sqlite';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { SqlLedger, fromSqlite } from '../../../../src/sql/index.js';
import {
  createWebhookHandler,
  signCallback,
  type WebhookHandlerError,
  type WebhookVerificationError,
} from '../../../../src/webhooks/index.js';

const API_KEY = 'sk_test_sqlite_app_connection_01';
let dir: string;
let app: DatabaseSync;

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'myr-sqlite-app-'));
  app = new DatabaseSync(join(dir, 'shop.db'));
  app.exec('CREATE TABLE refunds (payment_id TEXT NOT NULL); CREATE TABLE carts (item TEXT NOT NULL)');
});
afterAll(() => {
  app?.close();
  rmSync(dir, { recursive: true, force: true });
});

const count = (table: string) => Number(app.prepare(`SELECT count(*) AS n FROM ${table}`).get()?.n);

it("a route writing on the app's DatabaseSync while a handler awaits: never taken into the callback's transaction; the handler's refund commits once", async () => {
  const ledger = new SqlLedger(fromSqlite(app));
  await ledger.ensureSchema();
  let awaiting!: () => void;
  let resume!: () => void;
  let failing = true;
  const errors: (WebhookHandlerError | WebhookVerificationError)[] = [];
  const handler = createWebhookHandler({
    verifier: { apiKey: API_KEY },
    store: ledger,
    onError: (error) => void errors.push(error),
    onEvent: async (event, { tx }) => {
      tx.prepare('INSERT INTO refunds (payment_id) VALUES (?)').run(event.signed.payment_id);
      if (!failing) return;
      awaiting();
      await new Promise<void>((resolve) => (resume = resolve));
      throw new Error('the bank API is down');
    },
  });
  const paymentId = `PAY_${randomUUID()}`;
  const { rawBody, headers } = await signCallback(API_KEY, {
    payment_id: paymentId,
    reference_id: `ORDER_${paymentId}`,
    amount: 50,
    status: 'REFUNDED',
  });
  const request = { body: rawBody, headers };

  const first = handler.handle(request);
  await new Promise<void>((resolve) => (awaiting = resolve));
  // The route, while the handler awaits: what it answers is what the database keeps.
  let routeAnswer: unknown;
  try {
    app.prepare('INSERT INTO carts (item) VALUES (?)').run('sku-1');
    routeAnswer = 'saved';
  } catch (error) {
    routeAnswer = error;
  }
  const seenByRoute = count('carts');
  resume();
  expect((await first).status).toBe(500);
  expect(errors.map((error) => error.code)).toEqual(['WEBHOOK_HANDLER_FAILED']);
  expect(count('carts')).toBe(routeAnswer === 'saved' ? 1 : 0);
  expect(seenByRoute).toBe(count('carts'));
  // SQLite has one writer: the route is told at once, and its own retry is saved.
  expect(routeAnswer).toMatchObject({ message: expect.stringMatching(/database is locked/) });
  app.prepare('INSERT INTO carts (item) VALUES (?)').run('sku-1');
  expect(count('carts')).toBe(1);

  failing = false;
  expect(await handler.handle(request)).toMatchObject({ status: 200, body: { outcome: 'processed' } });
  expect(await handler.handle(request)).toMatchObject({ status: 200, body: { outcome: 'duplicate' } });
  expect(count('refunds')).toBe(1);
  expect(count('carts')).toBe(1);
});
