/**
 * Issue 7, webhooks: each finding of the review, reproduced through the public API as a
 * merchant meets it (a real Express app on 127.0.0.1 and the Web handler), plus its siblings.
 */
import { execFile } from 'node:child_process';
import { createServer, request } from 'node:http';
import type { AddressInfo } from 'node:net';
import { promisify } from 'node:util';
import express from 'express';
import { afterAll, afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import {
  MemoryWebhookStore,
  WebhookHandlerError,
  WebhookVerifier,
  createExpressMiddleware,
  createNodeHandler,
  createWebHandler,
  type WebhookEvent,
  type WebhookHandlerOptions,
  type WebhookStore,
} from '../../src/webhooks/index.js';
import {
  API_KEY,
  NOW,
  callback,
  headersFor,
  sign,
  baseBody,
  type Callback,
} from '../fixtures/webhook-vectors-helpers.js';
import { asListener } from '../helpers/real-server.js';
import { ConfigurationError } from '../../src/index.js';

const verifier = new WebhookVerifier({ apiKey: API_KEY, clock: () => NOW });

function web(options: Partial<WebhookHandlerOptions> & Pick<WebhookHandlerOptions, 'onEvent'>) {
  const handle = createWebHandler({ verifier, ...options });
  return async (body: string, headers: Record<string, string>) => {
    const response = await handle(new Request('http://127.0.0.1/webhooks/myr', { method: 'POST', headers, body }));
    return {
      status: response.status,
      json: (await response.json()) as { ok: boolean; outcome: string; reason?: string },
    };
  };
}

const servers: { close(cb: () => void): void }[] = [];
afterAll(async () => {
  await Promise.all(servers.map((s) => new Promise<void>((r) => s.close(() => r()))));
});

async function expressApp(options: Partial<WebhookHandlerOptions> & Pick<WebhookHandlerOptions, 'onEvent'>) {
  const app = express();
  app.use(express.json());
  app.post('/webhooks/myr', createExpressMiddleware({ verifier, ...options }));
  const server = createServer(app);
  servers.push(server);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/webhooks/myr`;
  return async (body: string, headers: Record<string, string>) => {
    const response = await fetch(url, { method: 'POST', headers, body });
    return {
      status: response.status,
      json: (await response.json()) as { ok: boolean; outcome: string; reason?: string },
    };
  };
}

/** The same signed body with unsigned fields changed on the way (the signature still matches). */
function relabel(cb: Callback, changes: Record<string, unknown>): string {
  return JSON.stringify({ ...cb.body, ...changes });
}

describe('relabelling: dispatch and idempotency keys rest on signed fields only', () => {
  for (const [name, make] of [
    ['web handler', web],
    ['express app', expressApp],
  ] as const) {
    it(`${name}: a deposit relabelled WITHDRAWAL is refused and claims nothing; the genuine one is handled once`, async () => {
      const onEvent = vi.fn<(event: WebhookEvent) => void>();
      const post = await make({ onEvent });
      const cb = await callback({ payment_id: 'PAY_RELABEL1' });
      const forged = relabel(cb, { transaction_type: 'WITHDRAWAL', bank_code: 'MBBEMYKL', account_number: '****0001' });

      expect(await post(forged, cb.headers)).toMatchObject({ status: 400, json: { ok: false, reason: 'malformed' } });
      expect(onEvent).not.toHaveBeenCalled();

      expect(await post(cb.raw, cb.headers)).toMatchObject({ status: 200, json: { outcome: 'processed' } });
      expect(onEvent).toHaveBeenCalledTimes(1);
      expect(onEvent.mock.calls[0]?.[0].transaction_type).toBe('DEPOSIT');
    });
  }

  it('a withdrawal relabelled DEPOSIT is refused, and the genuine withdrawal is then handled', async () => {
    const onEvent = vi.fn<(event: WebhookEvent) => void>();
    const post = web({ onEvent });
    const cb = await callback({
      payment_id: 'WD_RELABEL2',
      transaction_type: 'WITHDRAWAL',
      bank_code: 'MBBEMYKL',
      account_number: '****6789',
    });
    expect((await post(relabel(cb, { transaction_type: 'DEPOSIT' }), cb.headers)).status).toBe(400);
    expect(await post(cb.raw, cb.headers)).toMatchObject({ status: 200, json: { outcome: 'processed' } });
    expect(onEvent.mock.calls.map(([event]) => event.transaction_type)).toEqual(['WITHDRAWAL']);
  });

  it('an X-Payment-ID header that disagrees with the signed body is refused before any claim', async () => {
    const onEvent = vi.fn();
    const post = web({ onEvent });
    const cb = await callback({ payment_id: 'PAY_HEADER3' });
    expect((await post(cb.raw, { ...cb.headers, 'x-payment-id': 'WD_HEADER3' })).status).toBe(400);
    expect(await post(cb.raw, cb.headers)).toMatchObject({ status: 200, json: { outcome: 'processed' } });
    expect(onEvent).toHaveBeenCalledTimes(1);
  });

  it('bank fields added to a deposit do not reach the event; a missing transaction_type is taken from the signed id', async () => {
    const onEvent = vi.fn<(event: WebhookEvent) => void>();
    const post = web({ onEvent });
    const cb = await callback({ payment_id: 'PAY_BANK4' });
    const { transaction_type: _omitted, ...withoutType } = cb.body;
    const body = JSON.stringify({ ...withoutType, bank_code: 'EVIL', account_number: '1234567890' });
    expect((await post(body, cb.headers)).status).toBe(200);
    const event = onEvent.mock.calls[0]?.[0];
    expect(event?.transaction_type).toBe('DEPOSIT');
    expect(JSON.stringify(event)).not.toContain('EVIL');
  });
});

describe('onError that fails', () => {
  const rejections: unknown[] = [];
  const record = (reason: unknown) => rejections.push(reason);
  beforeEach(() => {
    rejections.length = 0;
    process.on('unhandledRejection', record);
  });
  afterEach(() => {
    process.off('unhandledRejection', record);
  });

  it('an async onError that rejects, or one that throws, never becomes an unhandled rejection', async () => {
    const post = await expressApp({
      onEvent: () => {
        throw new Error('handler failed');
      },
      onError: async () => {
        throw new Error('logger down');
      },
    });
    const cb = await callback();
    expect((await post(cb.raw, { ...cb.headers, 'x-webhook-signature': '0'.repeat(64) })).status).toBe(400);
    expect((await post(cb.raw, cb.headers)).status).toBe(500);
    const throwing = web({
      onEvent: () => {},
      onError: () => {
        throw new Error('sync logger down');
      },
    });
    expect((await throwing('{}', {})).status).toBe(401);
    await new Promise((r) => setTimeout(r, 20));
    expect(rejections).toEqual([]);
  });
});

/** A MemoryWebhookStore on a clock the test moves, with complete() failing as told. */
function controlledStore(failCompletes: number) {
  let now = 0;
  const memory = new MemoryWebhookStore({ clock: () => now });
  const calls = { complete: 0, renew: 0 };
  const renewed: (() => void)[] = [];
  const store: WebhookStore = {
    claim: (key, ttl) => memory.claim(key, ttl),
    release: (key, token) => memory.release(key, token),
    async complete(key, token, ttl) {
      calls.complete++;
      if (calls.complete <= failCompletes) throw new Error('store down');
      return memory.complete(key, token, ttl);
    },
    async renew(key, token, ttl) {
      calls.renew++;
      const held = await memory.renew(key, token, ttl);
      renewed.splice(0).forEach((resolve) => resolve());
      return held;
    },
  };
  return {
    store,
    calls,
    advance: (ms: number) => (now += ms),
    nextRenewal: () => new Promise<void>((resolve) => renewed.push(resolve)),
  };
}

describe('store.complete() fails after the handler succeeded', () => {
  it('retries the completion, so the callback is not run again after the claim would have expired', async () => {
    const onEvent = vi.fn();
    const onError = vi.fn();
    const { store, calls, advance } = controlledStore(1);
    const post = web({ onEvent, onError, store, inFlightTtlMs: 60_000 });
    const cb = await callback({ payment_id: 'PAY_COMPLETE1' });
    expect((await post(cb.raw, cb.headers)).status).toBe(200);
    expect(calls.complete).toBe(2);
    advance(61_000);
    const again = await callback({ payment_id: 'PAY_COMPLETE1' }); // the gateway's second delivery, new webhook_id
    expect(await post(again.raw, again.headers)).toMatchObject({ status: 200, json: { outcome: 'duplicate' } });
    expect(onEvent).toHaveBeenCalledTimes(1);
  });

  it('when the store never records it, this process still refuses to run it again and says so through onError', async () => {
    const onEvent = vi.fn();
    const onError = vi.fn();
    const { store, advance } = controlledStore(Number.POSITIVE_INFINITY);
    const post = web({ onEvent, onError, store });
    const cb = await callback({ payment_id: 'PAY_COMPLETE2' });
    expect((await post(cb.raw, cb.headers)).status).toBe(200);
    const reported = onError.mock.calls.map(([error]) => error as WebhookHandlerError);
    expect(reported.some((e) => e instanceof WebhookHandlerError && e.stage === 'store')).toBe(true);
    advance(61_000);
    expect(await post(cb.raw, cb.headers)).toMatchObject({ status: 200, json: { outcome: 'duplicate' } });
    expect(onEvent).toHaveBeenCalledTimes(1);
  });
});

describe('slow and hanging handlers', () => {
  it('a handler running past the in-flight TTL renews its claim, so a retry is not run concurrently', async () => {
    let finish!: () => void;
    const onEvent = vi.fn(() => new Promise<void>((r) => (finish = r)));
    const { store, advance, nextRenewal } = controlledStore(0);
    const post = await expressApp({ onEvent, store, inFlightTtlMs: 90 });
    const cb = await callback({ payment_id: 'PAY_SLOW1' });
    const first = post(cb.raw, cb.headers);
    await vi.waitFor(() => expect(onEvent).toHaveBeenCalledTimes(1));
    advance(60);
    await nextRenewal(); // the claim now runs to 60 + 90 on the store's clock
    advance(60); // past the first claim's 90
    expect(await post(cb.raw, cb.headers)).toMatchObject({ status: 409, json: { outcome: 'in_flight' } });
    finish();
    expect((await first).status).toBe(200);
    expect(await post(cb.raw, cb.headers)).toMatchObject({ status: 200, json: { outcome: 'duplicate' } });
    expect(onEvent).toHaveBeenCalledTimes(1);
  });

  it('a handler that never settles gets a 503 after handlerTimeoutMs; the claim is kept until it settles', async () => {
    let finish!: () => void;
    const onEvent = vi.fn(() => new Promise<void>((r) => (finish = r)));
    const onError = vi.fn();
    const post = web({ onEvent, onError, handlerTimeoutMs: 30 });
    const cb = await callback({ payment_id: 'PAY_HANG1' });
    const first = await Promise.race([
      post(cb.raw, cb.headers),
      new Promise<null>((r) => setTimeout(() => r(null), 3000)),
    ]);
    expect(first).toMatchObject({ status: 503, json: { ok: false, outcome: 'in_flight' } });
    expect(await post(cb.raw, cb.headers)).toMatchObject({ status: 409 });
    finish();
    await vi.waitFor(async () =>
      expect(await post(cb.raw, cb.headers)).toMatchObject({ status: 200, json: { outcome: 'duplicate' } }),
    );
    expect(onEvent).toHaveBeenCalledTimes(1);
    expect(onError.mock.calls.some(([e]) => e instanceof WebhookHandlerError && e.stage === 'handler')).toBe(true);
  });

  it('a hanging handler keeps no timer alive: the process exits once the 503 is given', async () => {
    const script = `
      import { createWebhookHandler, WebhookVerifier } from './src/webhooks/index.ts';
      import { callback, API_KEY, NOW } from './test/fixtures/webhook-vectors-helpers.ts';
      const handler = createWebhookHandler({
        verifier: new WebhookVerifier({ apiKey: API_KEY, clock: () => NOW }),
        onEvent: () => new Promise(() => {}),
        handlerTimeoutMs: 20,
        inFlightTtlMs: 30,
      });
      const cb = await callback();
      const response = await handler.handle({ body: cb.raw, headers: cb.headers });
      console.log('status', response.status);
    `;
    const { stdout } = await promisify(execFile)(
      process.execPath,
      ['--import', 'tsx', '--input-type=module', '-e', script],
      {
        cwd: new URL('../..', import.meta.url),
        timeout: 15_000,
      },
    );
    expect(stdout.trim()).toBe('status 503');
  }, 30_000);
});

describe('timestamps without a zone', () => {
  it('are read as UTC, as the spec defines the timestamp', async () => {
    const onEvent = vi.fn();
    const zoneless = new Date(NOW).toISOString().replace('Z', '');
    const cb = await callback({ timestamp: zoneless });
    expect((await web({ onEvent })(cb.raw, cb.headers)).status).toBe(200);
    const late = new WebhookVerifier({ apiKey: API_KEY, clock: () => NOW + 301_000 });
    await expect(late.verify({ body: cb.raw })).rejects.toMatchObject({ reason: 'stale' });
  });
});

describe('hostile bodies', () => {
  it('a JSON array, a nesting bomb and a body of nulls get 400 without running anything', async () => {
    const onEvent = vi.fn();
    const post = web({ onEvent });
    const cb = await callback();
    expect((await post(JSON.stringify([cb.body]), cb.headers)).status).toBe(400);
    expect((await post('['.repeat(30_000) + ']'.repeat(30_000), cb.headers)).status).toBe(400);
    expect([400, 401]).toContain(
      (await post(`{"a":${'{"a":'.repeat(10_000)}1${'}'.repeat(10_001)}`, cb.headers)).status,
    );
    expect((await post('null', cb.headers)).status).toBe(400);
    expect(onEvent).not.toHaveBeenCalled();
  });

  it('a repeated key cannot smuggle a second transaction_type past the check', async () => {
    const onEvent = vi.fn();
    const cb = await sign(baseBody({ payment_id: 'PAY_DUPKEY' }));
    const raw = cb.raw.replace(
      '"transaction_type":"DEPOSIT"',
      '"transaction_type":"DEPOSIT","transaction_type":"WITHDRAWAL"',
    );
    expect((await web({ onEvent })(raw, headersFor(cb.body))).status).toBe(400);
    expect(onEvent).not.toHaveBeenCalled();
  });
});

describe('slow and oversized bodies', () => {
  it('a body that never finishes gets 408 after bodyTimeoutMs (node:http and Web handler)', async () => {
    const onEvent = vi.fn();
    const server = createServer(asListener(createNodeHandler({ verifier, onEvent, bodyTimeoutMs: 50 })));
    servers.push(server);
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const status = await new Promise<number | undefined>((resolve) => {
      const req = request(`http://127.0.0.1:${(server.address() as AddressInfo).port}/`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
      });
      req.on('response', (res) => {
        res.resume();
        resolve(res.statusCode);
        req.destroy();
      });
      req.on('error', () => resolve(undefined));
      req.write('{"webhook_id":'); // and nothing more
      setTimeout(() => resolve(undefined), 3000).unref();
    });
    expect(status).toBe(408);

    const handle = createWebHandler({ verifier, onEvent, bodyTimeoutMs: 50 });
    const stalled = new ReadableStream<Uint8Array>({ start: (c) => c.enqueue(new TextEncoder().encode('{')) });
    const response = await handle(
      new Request('http://127.0.0.1/', { method: 'POST', body: stalled, duplex: 'half' } as RequestInit),
    );
    expect(response.status).toBe(408);
    expect(onEvent).not.toHaveBeenCalled();
  });

  it('a bodyTimeoutMs beyond what a timer holds is refused when the adapter is made, not fired after 1 ms as a 408', async () => {
    const onEvent = vi.fn();
    for (const bodyTimeoutMs of [3e9, 1.5, Number.POSITIVE_INFINITY]) {
      for (const make of [
        () => createNodeHandler({ verifier, onEvent, bodyTimeoutMs }),
        () => createWebHandler({ verifier, onEvent }, { bodyTimeoutMs }),
      ]) {
        let caught: unknown;
        try {
          make();
        } catch (error) {
          caught = error;
        }
        expect(caught).toBeInstanceOf(ConfigurationError);
        expect((caught as ConfigurationError).field).toBe('bodyTimeoutMs');
        expect((caught as ConfigurationError).message).toBe(
          'bodyTimeoutMs must be a whole number of milliseconds from 1 to 2147483647',
        );
      }
    }

    // The longest a timer holds is taken, and waits: a body in two halves 100 ms apart is read whole.
    const server = createServer(asListener(createNodeHandler({ verifier, onEvent, bodyTimeoutMs: 2_147_483_647 })));
    servers.push(server);
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const cb = await sign(baseBody({ payment_id: 'PAY_SLOW_HALVES' }));
    const status = await new Promise<number | undefined>((resolve) => {
      const req = request(`http://127.0.0.1:${(server.address() as AddressInfo).port}/`, {
        method: 'POST',
        headers: headersFor(cb.body),
      });
      req.on('response', (res) => {
        res.resume();
        resolve(res.statusCode);
      });
      req.on('error', () => resolve(undefined));
      const half = Math.floor(cb.raw.length / 2);
      req.write(cb.raw.slice(0, half));
      setTimeout(() => req.end(cb.raw.slice(half)), 100);
    });
    expect(status).toBe(200);
    expect(onEvent).toHaveBeenCalledTimes(1);
  });

  it.each([
    ['announced by Content-Length', true],
    ['chunked', false],
  ])(
    'an oversized body %s: 413, then at most 1 MiB more is read before the connection is closed',
    async (_name, announce) => {
      const MiB = 1024 * 1024;
      const onEvent = vi.fn();
      const server = createServer(createNodeHandler({ verifier, onEvent }));
      servers.push(server);
      // What the server read from the connection in all, counted when it closes.
      const read = new Promise<number>((resolve) =>
        server.on('connection', (socket) => socket.on('close', () => resolve(socket.bytesRead))),
      );
      await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
      const total = 256 * MiB;
      const status = await new Promise<number | undefined>((resolve) => {
        const headers: Record<string, string | number> = { 'content-type': 'application/json' };
        if (announce) headers['content-length'] = total;
        const req = request(`http://127.0.0.1:${(server.address() as AddressInfo).port}/`, { method: 'POST', headers });
        let answer: number | undefined;
        req.on('response', (res) => {
          answer = res.statusCode;
          res.resume();
        });
        req.on('error', () => resolve(answer));
        req.on('close', () => resolve(answer));
        const chunk = Buffer.alloc(64 * 1024, 0x61);
        let sent = 0;
        const pump = () => {
          while (sent < total) {
            sent += chunk.length;
            if (!req.write(chunk)) return void req.once('drain', pump);
          }
          req.end();
        };
        pump();
      });
      expect(status).toBe(413);
      // The 64 KiB limit, the drain's 1 MiB, and a read's worth of slack (64 KiB chunks, headers).
      expect(await read).toBeLessThan(65_536 + MiB + 256 * 1024);
      expect(onEvent).not.toHaveBeenCalled();
    },
  );

  it('a body a parser already read is held to maxBodyBytes as well', async () => {
    const onEvent = vi.fn();
    const app = express();
    app.use(express.text({ type: '*/*', limit: '1mb' }));
    app.post('/webhooks/myr', createExpressMiddleware({ verifier, onEvent, maxBodyBytes: 1024 }));
    const server = createServer(app);
    servers.push(server);
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const cb = await callback();
    const padded = JSON.stringify({ ...cb.body, padding: 'x'.repeat(4096) });
    // streamed, so no Content-Length tells the size up front
    const body = new ReadableStream<Uint8Array>({
      start(c) {
        c.enqueue(new TextEncoder().encode(padded));
        c.close();
      },
    });
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/webhooks/myr`;
    const response = await fetch(url, { method: 'POST', headers: cb.headers, body, duplex: 'half' } as RequestInit);
    expect(response.status).toBe(413);
    expect(onEvent).not.toHaveBeenCalled();
  });
});
