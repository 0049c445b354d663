/**
 * A write of the handler that breaks a DEFERRABLE INITIALLY DEFERRED foreign key fails at the
 * ledger's COMMIT: SQLite refuses the COMMIT, and the ledger rolls everything back. As on Postgres
 * (sql/postgres-deferred-constraint.test.ts), that outcome is known (nothing committed, the handler's
 * write refused): the delivery is the handler's failure (500, stage 'handler'), not a database
 * that is "temporarily unavailable" (503, stage 'store'), and nothing is recorded, so the
 * redelivery runs the handler again. Real SQLite through the runtime's node:sqlite, as a merchant
 * wires it: createWebhookHandler and runOnce with the orders in the ledger's file.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { SqlLedger, fromSqlite } from '../../../../src/sql/index.js';
import { createWebhookHandler, runOnce, signCallback, WebhookHandlerError } from '../../../../src/webhooks/index.js';

const API_KEY = 'sk_test_sqlite_deferred_01';
let dir: string;
let shop: DatabaseSync;

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'myr-sqlite-deferred-'));
  shop = new DatabaseSync(join(dir, 'shop.db'));
  shop.exec(`PRAGMA journal_mode = WAL;
    CREATE TABLE parcels (id INTEGER PRIMARY KEY);
    CREATE TABLE shipments (reference_id TEXT NOT NULL, parcel INTEGER REFERENCES parcels (id) DEFERRABLE INITIALLY DEFERRED)`);
});
afterAll(() => {
  shop?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

/** The merchant's ledger on its own file; the handler ships the order in `parcel`, which does not exist until `parcelArrives(parcel)`. */
async function receiver(parcel: number) {
  const ledger = new SqlLedger(fromSqlite(join(dir, 'shop.db')));
  await ledger.ensureSchema();
  const ship = (tx: DatabaseSync, referenceId: string) =>
    void tx.prepare('INSERT INTO shipments (reference_id, parcel) VALUES (?, ?)').run(referenceId, parcel);
  const shipments = (referenceId: string) =>
    Number(shop.prepare('SELECT count(*) AS n FROM shipments WHERE reference_id = ?').get(referenceId)?.n);
  return { ledger, ship, shipments };
}
const parcelArrives = (parcel: number) => void shop.prepare('INSERT INTO parcels (id) VALUES (?)').run(parcel);

it('the webhook handler: a deferred foreign key broken at COMMIT is 500 (the handler failed), nothing committed; the redelivery runs the handler again', async () => {
  const { ledger, ship, shipments } = await receiver(42);
  const errors: unknown[] = [];
  let runs = 0;
  const handler = createWebhookHandler({
    verifier: { apiKey: API_KEY },
    store: ledger,
    onEvent: (event, { tx }) => {
      runs++;
      ship(tx, event.signed.reference_id);
    },
    onError: (error) => void errors.push(error),
  });
  const { rawBody, headers } = await signCallback(API_KEY, {
    payment_id: 'PAY_SQLITE_DEFERRED',
    reference_id: 'ORDER_SQLITE_DEFERRED',
    amount: 50,
    status: 'SUCCESS',
  });
  const request = { body: rawBody, headers };

  expect((await handler.handle(request)).status).toBe(500);
  expect(errors).toEqual([expect.objectContaining({ stage: 'handler' })]);
  expect(errors[0]).toBeInstanceOf(WebhookHandlerError);
  expect(shipments('ORDER_SQLITE_DEFERRED')).toBe(0);

  // Not recorded as processed: once the parcel exists, the redelivery runs the handler and commits.
  parcelArrives(42);
  expect(await handler.handle(request)).toMatchObject({ status: 200, body: { outcome: 'processed' } });
  expect(runs).toBe(2);
  expect(shipments('ORDER_SQLITE_DEFERRED')).toBe(1);
});

it('runOnce: the same COMMIT is a WebhookHandlerError at stage handler, and a second runOnce runs the work again', async () => {
  const { ledger, ship, shipments } = await receiver(43);
  const key = 'payment:PAY_SQLITE_DEFERRED_RUN_ONCE:SUCCESS';
  const failure = await runOnce(ledger, key, ({ tx }) => ship(tx, key)).then(
    () => undefined,
    (error: unknown) => error,
  );
  expect(failure).toBeInstanceOf(WebhookHandlerError);
  expect(failure).toMatchObject({ stage: 'handler' });
  expect(shipments(key)).toBe(0);

  parcelArrives(43);
  let ran = false;
  expect((await runOnce(ledger, key, ({ tx }) => ((ran = true), ship(tx, key)))).outcome).toBe('processed');
  expect(ran).toBe(true);
  expect(shipments(key)).toBe(1);
});
