/**
 * The sandbox's deliveries and the webhook handler's default `handlerTimeoutMs` agree: the
 * sandbox gives each attempt 10 s, so a handler answering later than that was shown as "failed"
 * on the dashboard although its run committed. With the SQL ledger (node:sqlite, a file) and the
 * sandbox's own delivery code at its defaults (attempt timeout, retry delays), a callback whose
 * first run takes 20 s: the delivery is "delivered" exactly when the fulfilment committed, never
 * "failed" beside a committed fulfilment.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { fromSqlite, SqlLedger } from '../../src/sql/index.js';
import { createMockGateway } from '../../src/testing/index.js';
import { createWebhookHandler } from '../../src/webhooks/index.js';
import { call, deposit, getToken } from '../helpers/mock-http.js';

const API_KEY = 'sk_test_sandbox_timeout_01';
const dir = mkdtempSync(join(tmpdir(), 'myr-sandbox-timeout-'));
const file = join(dir, 'shop.db');
let receiver: Server;
let origin = '';
/** Every run the handler started, settled once it committed or rolled back. */
const runs: Promise<unknown>[] = [];
const mock = createMockGateway({ environment: 'test', merchants: [{ merchantId: 'MERCHANT_TO', apiKey: API_KEY }] });

beforeAll(async () => {
  const setup = new DatabaseSync(file);
  setup.exec('CREATE TABLE fulfilments (payment_id TEXT NOT NULL)');
  setup.close();
  const ledger = new SqlLedger(fromSqlite(file));
  await ledger.ensureSchema();
  let started = 0;
  const handler = createWebhookHandler({
    verifier: { apiKey: API_KEY },
    store: ledger,
    onEvent: async (event, { tx }) => {
      // The first run is slow (a stuck downstream call); a retry is quick.
      const run = (async () => {
        if (++started === 1) await new Promise((resolve) => setTimeout(resolve, 20_000));
        tx.prepare('INSERT INTO fulfilments (payment_id) VALUES (?)').run(event.signed.payment_id);
      })();
      runs.push(run.catch(() => undefined));
      await run;
    },
  });
  receiver = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      // The answer comes after COMMIT, or at handlerTimeoutMs while the handler goes on (its run then never commits).
      const answered = handler
        .handle({ body: Buffer.concat(chunks).toString('utf8'), headers: req.headers })
        .then((answer) => {
          res.writeHead(answer.status, { 'Content-Type': 'application/json', ...answer.headers });
          res.end(JSON.stringify(answer.body));
        });
      runs.push(answered);
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  origin = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}`;
  mock.listen();
});
afterAll(async () => {
  mock.close();
  receiver.closeAllConnections();
  await new Promise<void>((resolve) => receiver.close(() => resolve()));
  rmSync(dir, { recursive: true, force: true });
});

it('a callback shown as failed was never fulfilled; one fulfilled is shown as delivered (defaults of both sides)', async () => {
  const token = await getToken(mock);
  const created = await call(mock, 'POST', '/payment/request', {
    token,
    body: deposit({ callback_url: `${origin}/webhooks/myr` }),
  });
  expect(created.status).toBe(200);
  const paymentId = created.body.data.payment_id as string;

  const delivery = await mock.completePayment(paymentId, 'SUCCESS');
  while (runs.length > 0) await runs.shift(); // every answer given and every handler settled: nothing commits after this
  const reader = new DatabaseSync(file, { readOnly: true });
  const fulfilled = Number(
    reader.prepare('SELECT count(*) AS n FROM fulfilments WHERE payment_id = ?').get(paymentId)?.n,
  );
  reader.close();

  expect({ delivered: delivery.delivered, fulfilled }).toEqual(
    delivery.delivered ? { delivered: true, fulfilled: 1 } : { delivered: false, fulfilled: 0 },
  );
  expect(delivery.attempts[0]).toMatchObject({ status: 503 }); // answered before the sandbox gave up on it
}, 60_000);
