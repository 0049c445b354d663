/**
 * SQLite has one writer: a run holds the file's write lock for its handler's whole time. Through
 * the public webhooks entry with the defaults: one stuck handler (12 s) cannot cost another
 * payment its callback, delivered on the gateway's schedule (immediately, then about 1 s and
 * 5 s after each answer that is not 2xx).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomUUID } from 'node:crypto';
import { DatabaseSync } from 'node:sqlite';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { SqlLedger, fromSqlite } from '../../../../src/sql/index.js';
import { createWebhookHandler, signCallback, type WebhookHandler } from '../../../../src/webhooks/index.js';

const API_KEY = 'sk_test_sqlite_one_writer_01';
/** The gateway's waits after an attempt that was not answered 2xx (the spec's delivery table). */
const RETRY_DELAYS_MS = [1000, 5000];
let dir: string;
let reader: DatabaseSync;

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'myr-sqlite-one-writer-'));
  const setup = new DatabaseSync(join(dir, 'shop.db'));
  setup.exec('PRAGMA journal_mode = WAL; CREATE TABLE orders (payment_id TEXT NOT NULL)');
  setup.close();
  reader = new DatabaseSync(join(dir, 'shop.db'), { readOnly: true });
});
afterAll(() => {
  reader?.close();
  rmSync(dir, { recursive: true, force: true });
});

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const fulfilments = (paymentId: string) =>
  Number(reader.prepare('SELECT count(*) AS n FROM orders WHERE payment_id = ?').get(paymentId)?.n);

async function request(paymentId: string) {
  const { rawBody, headers } = await signCallback(API_KEY, {
    payment_id: paymentId,
    reference_id: `ORDER_${paymentId}`,
    amount: 50,
    status: 'SUCCESS',
  });
  return { body: rawBody, headers };
}

/** Delivers as the gateway does: up to 3 attempts, waiting after each one not answered 2xx; the statuses answered. */
async function deliver(
  handler: WebhookHandler,
  delivery: { body: string; headers: Record<string, string> },
): Promise<number[]> {
  const statuses: number[] = [];
  for (const wait of [...RETRY_DELAYS_MS, undefined]) {
    const { status } = await handler.handle(delivery);
    statuses.push(status);
    if ((status >= 200 && status < 300) || wait === undefined) return statuses;
    await sleep(wait);
  }
  return statuses;
}

it("one 12 s handler: another payment's callback is processed within the gateway's three deliveries; the slow one is rolled back, its late write refused", async () => {
  const ledger = new SqlLedger(fromSqlite(join(dir, 'shop.db')));
  await ledger.ensureSchema();
  const slow = `PAY_slow_${randomUUID()}`;
  let started!: () => void;
  const slowStarted = new Promise<void>((resolve) => (started = resolve));
  let slowWork: Promise<unknown> | undefined;
  const handler = createWebhookHandler({
    verifier: { apiKey: API_KEY },
    store: ledger,
    onEvent: async (event, { tx }) => {
      const work = async () => {
        if (event.signed.payment_id === slow) {
          started();
          await sleep(12_000);
        }
        tx.prepare('INSERT INTO orders (payment_id) VALUES (?)').run(event.signed.payment_id);
      };
      const running = work();
      if (event.signed.payment_id === slow) slowWork ??= running.catch((error: unknown) => error);
      await running;
    },
  });
  const other = `PAY_other_${randomUUID()}`;
  const slowAnswer = handler.handle(await request(slow));
  await slowStarted;
  const otherStatuses = await deliver(handler, await request(other));
  expect(otherStatuses.at(-1)).toBe(200);
  expect(fulfilments(other)).toBe(1);
  // The slow one was answered 503 (the gateway retries it), its transaction rolled back.
  expect((await slowAnswer).status).toBe(503);
  expect(await slowWork).toMatchObject({ message: expect.stringMatching(/after its run had ended/) });
  expect(fulfilments(slow)).toBe(0);
}, 30_000);
