/**
 * Issue 15: a refused (401) or failed (500) callback writes one line to the merchant's logger,
 * through the handler and through an adapter, and no line carries a secret (api key,
 * signature, body, or what the merchant's own code threw).
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { signCallback } from '../../src/testing/index.js';
import {
  createNodeHandler,
  createWebHandler,
  createWebhookHandler,
  type WebhookHandlerOptions,
} from '../../src/webhooks/index.js';
import { asListener } from '../helpers/real-server.js';

const API_KEY = 'sk_test_logger_secret_0001';
const THROWN = 'db password hunter2 in the merchant error';

type Line = { level: string; args: unknown[] };
function recordingLogger(pino = false) {
  const lines: Line[] = [];
  const at =
    (level: string) =>
    (...args: unknown[]) =>
      void lines.push({ level, args });
  const logger = { debug: at('debug'), info: at('info'), warn: at('warn'), error: at('error') };
  if (pino) Object.assign(logger, { [Symbol.for('pino.serializers')]: {} });
  return { logger, lines };
}

async function delivery(apiKey = API_KEY) {
  const { rawBody, headers } = await signCallback(apiKey, {
    payment_id: 'PAY_LOG_1',
    reference_id: 'ORDERLOG1',
    amount: 12,
    status: 'SUCCESS',
  });
  return { body: rawBody, headers };
}

function expectNoSecret(lines: Line[], signature: string) {
  const text = JSON.stringify(lines.map((l) => l.args));
  expect(text).not.toContain(API_KEY);
  expect(text).not.toContain(signature);
  expect(text).not.toContain('hunter2');
  expect(text).not.toContain('ORDERLOG1'); // the body is not logged either
}

const options = (logger: WebhookHandlerOptions['logger'], onEvent: WebhookHandlerOptions['onEvent'] = () => {}) => ({
  verifier: { apiKey: API_KEY },
  logger,
  onEvent,
});

describe('the handler', () => {
  it('a callback signed with the wrong key: 401 and one warn line', async () => {
    const { logger, lines } = recordingLogger();
    const forged = await delivery('sk_test_someone_else_0002');
    const answer = await createWebhookHandler(options(logger)).handle(forged);
    expect(answer.status).toBe(401);
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({
      level: 'warn',
      args: [
        expect.stringContaining('myr-gateway webhook'),
        expect.objectContaining({ code: 'WEBHOOK_VERIFICATION_FAILED', reason: 'invalid_signature' }),
      ],
    });
    expectNoSecret(lines, forged.headers['X-Webhook-Signature'] ?? forged.headers['x-webhook-signature'] ?? '');
  });

  it('a throwing onEvent: 500 and one error line naming the payment, not the thrown text', async () => {
    const { logger, lines } = recordingLogger();
    const d = await delivery();
    const answer = await createWebhookHandler(
      options(logger, () => {
        throw new TypeError(THROWN);
      }),
    ).handle(d);
    expect(answer.status).toBe(500);
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({
      level: 'error',
      args: [
        expect.any(String),
        expect.objectContaining({
          code: 'WEBHOOK_HANDLER_FAILED',
          stage: 'handler',
          cause: 'TypeError',
          payment_id: 'PAY_LOG_1',
        }),
      ],
    });
    expectNoSecret(lines, JSON.parse(d.body).signature as string);
  });

  it('pino: fields first, then the message', async () => {
    const { logger, lines } = recordingLogger(true);
    await createWebhookHandler(options(logger)).handle(await delivery('sk_test_someone_else_0002'));
    expect(lines[0]?.args).toEqual([
      expect.objectContaining({ reason: 'invalid_signature' }),
      expect.stringContaining('myr-gateway webhook'),
    ]);
  });

  it('a handled callback writes nothing; without a logger nothing is written anywhere', async () => {
    const { logger, lines } = recordingLogger();
    expect((await createWebhookHandler(options(logger)).handle(await delivery())).status).toBe(200);
    expect(lines).toEqual([]);
  });

  it('refuses a logger without warn and error', () => {
    expect(() => createWebhookHandler(options({} as never))).toThrow(/logger must have warn and error/);
  });
});

describe('the adapters', () => {
  it('web: a body over maxBodyBytes is refused (413) with one warn line, before the handler', async () => {
    const { logger, lines } = recordingLogger();
    const handle = createWebHandler({ ...options(logger), maxBodyBytes: 64 });
    const response = await handle(new Request('http://127.0.0.1/webhooks', { method: 'POST', body: 'x'.repeat(1000) }));
    expect(response.status).toBe(413);
    expect(lines).toEqual([
      { level: 'warn', args: [expect.stringContaining('larger than maxBodyBytes'), expect.any(Object)] },
    ]);
  });

  describe('node, on a real HTTP server', () => {
    const { logger, lines } = recordingLogger();
    let server: Server;
    let url: string;
    beforeAll(async () => {
      server = createServer(
        asListener(
          createNodeHandler(
            options(logger, () => {
              throw new Error(THROWN);
            }),
          ),
        ),
      );
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
    });
    afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

    it('a wrong key (401) and a failing handler (500) are each logged once', async () => {
      const forged = await delivery('sk_test_someone_else_0002');
      const good = await delivery();
      const a = await fetch(url, { method: 'POST', body: forged.body, headers: forged.headers });
      const b = await fetch(url, { method: 'POST', body: good.body, headers: good.headers });
      expect([a.status, b.status]).toEqual([401, 500]);
      expect(lines.map((l) => l.level)).toEqual(['warn', 'error']);
      expectNoSecret(lines, JSON.parse(good.body).signature as string);
    });
  });
});

describe('the node listener (issue 23: a plain listener, failures to onError and the logger)', () => {
  it('returns nothing; a failure while answering gives the gateway a 500, one error line and onError, and the retry is acknowledged', async () => {
    const { logger, lines } = recordingLogger();
    const errors: unknown[] = [];
    let runs = 0;
    const listener = createNodeHandler({
      ...options(logger, () => void runs++),
      onError: (error) => void errors.push(error),
    });
    let returned: unknown = 'not called';
    let failNext = true;
    const server = createServer((req, res) => {
      const setHeader = res.setHeader.bind(res);
      // The first header write of the first request fails, as a broken proxy or instrumentation might make it.
      res.setHeader = (name: string, value: string | number | readonly string[]) => {
        if (failNext) {
          failNext = false;
          throw new Error('header write failed');
        }
        return setHeader(name, value);
      };
      returned = listener(req, res);
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
      const d = await delivery();
      const first = await fetch(url, { method: 'POST', body: d.body, headers: d.headers });
      expect(returned).toBeUndefined();
      expect(first.status).toBe(500);
      expect(await first.json()).toEqual({ ok: false, outcome: 'failed' });
      expect(errors).toEqual([
        expect.objectContaining({ name: 'WebhookHandlerError', code: 'WEBHOOK_HANDLER_FAILED' }),
      ]);
      expect(lines).toEqual([
        {
          level: 'error',
          args: [
            expect.stringContaining('the node listener failed to answer'),
            expect.objectContaining({ cause: 'Error' }),
          ],
        },
      ]);
      const retry = await fetch(url, { method: 'POST', body: d.body, headers: d.headers });
      expect(retry.status).toBe(200);
      expect(runs).toBe(1);
      expectNoSecret(lines, JSON.parse(d.body).signature as string);
    } finally {
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
  });
});
