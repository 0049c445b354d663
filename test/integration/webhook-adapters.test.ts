/**
 * Every adapter in a real app listening on 127.0.0.1, with and without body parsers:
 * statuses, exactly-once, retries after a failure, concurrent duplicates, body limits.
 */
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { serve } from '@hono/node-server';
import express5 from 'express';
import express4 from 'express4';
import Fastify from 'fastify';
import { Hono } from 'hono';
import Koa from 'koa';
import { afterAll, describe, expect, it, vi } from 'vitest';
import {
  WebhookVerifier,
  createExpressMiddleware,
  createFastifyHandler,
  createHonoHandler,
  createKoaMiddleware,
  createNodeHandler,
  createWebHandler,
  createWebhookHandler,
  fastifyWebhookPlugin,
  type WebhookEvent,
  type WebhookHandler,
} from '../../src/webhooks/index.js';
import { API_KEY, NOW, callback, type Callback } from '../fixtures/webhook-vectors-helpers.js';

const PATH = '/webhooks/myr';

interface Running {
  url: string;
  close: () => Promise<void>;
}

function listen(server: Server): Promise<Running> {
  return new Promise((resolve) => {
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as AddressInfo;
      resolve({
        url: `http://127.0.0.1:${port}${PATH}`,
        close: () => new Promise<void>((r) => server.close(() => r())),
      });
    });
  });
}

/** A bodyparser-style reader with a limit, as koa-bodyparser has (its 413 comes before our adapter). */
function readAll(req: IncomingMessage): Promise<Buffer> {
  if (Number(req.headers['content-length']) > 1_000_000) return Promise.reject(Object.assign(new Error('too large'), { status: 413, expose: true }));
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => resolve(Buffer.concat(chunks)));
    req.on('error', reject);
  });
}

type Start = (handler: WebhookHandler) => Promise<Running>;

const apps: Record<string, Start> = {
  'express 5, no body parser': (h) => {
    const app = express5();
    app.post(PATH, createExpressMiddleware(h));
    return listen(createServer(app));
  },
  'express 5, express.json()': (h) => {
    const app = express5();
    app.use(express5.json());
    app.post(PATH, createExpressMiddleware(h));
    return listen(createServer(app));
  },
  'express 5, express.raw()': (h) => {
    const app = express5();
    app.use(express5.raw({ type: '*/*' }));
    app.post(PATH, createExpressMiddleware(h));
    return listen(createServer(app));
  },
  'express 5, express.text()': (h) => {
    const app = express5();
    app.use(express5.text({ type: '*/*' }));
    app.post(PATH, createExpressMiddleware(h));
    return listen(createServer(app));
  },
  'express 4, no body parser': (h) => {
    const app = express4();
    app.post(PATH, createExpressMiddleware(h));
    return listen(createServer(app));
  },
  'express 4, express.json()': (h) => {
    const app = express4();
    app.use(express4.json());
    app.post(PATH, createExpressMiddleware(h));
    return listen(createServer(app));
  },
  'express 4, json parser for another type (body {} but stream unread)': (h) => {
    const app = express4();
    app.use(express4.json({ type: 'application/x-other' }));
    app.post(PATH, createExpressMiddleware(h));
    return listen(createServer(app));
  },
  'fastify, built-in JSON parser': async (h) => {
    const app = Fastify();
    app.post(PATH, createFastifyHandler(h));
    await app.listen({ port: 0, host: '127.0.0.1' });
    const { port } = app.server.address() as AddressInfo;
    return { url: `http://127.0.0.1:${port}${PATH}`, close: () => app.close() };
  },
  'fastify, plugin keeping the raw body': async (h) => {
    const app = Fastify();
    await app.register(fastifyWebhookPlugin, { path: PATH, handler: h });
    app.post('/other', async (request) => ({ parsed: request.body }));
    await app.listen({ port: 0, host: '127.0.0.1' });
    const { port } = app.server.address() as AddressInfo;
    return { url: `http://127.0.0.1:${port}${PATH}`, close: () => app.close() };
  },
  'hono on @hono/node-server': (h) => {
    const app = new Hono();
    app.post(PATH, createHonoHandler(h));
    return serveFetch(app.fetch);
  },
  'hono, body read as JSON by an earlier middleware': (h) => {
    const app = new Hono();
    app.use(PATH, async (c, next) => {
      await c.req.json().catch(() => undefined);
      await next();
    });
    app.post(PATH, createHonoHandler(h));
    return serveFetch(app.fetch);
  },
  'koa, no body parser': (h) => {
    const app = new Koa();
    app.use(createKoaMiddleware(h, { path: PATH }));
    return listen(createServer(app.callback()));
  },
  'koa, parsed body (bodyparser-style, no rawBody)': (h) => {
    const app = new Koa();
    app.use(async (ctx, next) => {
      const raw = await readAll(ctx.req);
      try {
        (ctx.request as { body?: unknown }).body = JSON.parse(raw.toString('utf8'));
      } catch {
        (ctx.request as { body?: unknown }).body = raw.toString('utf8');
      }
      await next();
    });
    app.use(createKoaMiddleware(h, { path: PATH }));
    return listen(createServer(app.callback()));
  },
  'koa, rawBody kept by the parser': (h) => {
    const app = new Koa();
    app.use(async (ctx, next) => {
      const raw = (await readAll(ctx.req)).toString('utf8');
      Object.assign(ctx.request, { rawBody: raw, body: { replaced: true } });
      await next();
    });
    app.use(createKoaMiddleware(h, { path: PATH }));
    return listen(createServer(app.callback()));
  },
  'web handler on @hono/node-server': (h) => serveFetch(createWebHandler(h)),
  'node:http handler': (h) => listen(createServer(createNodeHandler(h))),
};

function serveFetch(fetch: (request: Request) => Response | Promise<Response>): Promise<Running> {
  return new Promise((resolve) => {
    const server = serve({ fetch, port: 0, hostname: '127.0.0.1' }, (info) => {
      resolve({
        url: `http://127.0.0.1:${info.port}${PATH}`,
        close: () => new Promise<void>((r) => server.close(() => r())),
      });
    });
  });
}

const running: Running[] = [];
afterAll(async () => {
  await Promise.all(running.map((r) => r.close()));
});

async function startApp(start: Start, onEvent: (event: WebhookEvent) => unknown) {
  const handler = createWebhookHandler({ verifier: new WebhookVerifier({ apiKey: API_KEY, clock: () => NOW }), onEvent });
  const app = await start(handler);
  running.push(app);
  return app;
}

async function post(url: string, cb: Pick<Callback, 'headers'>, body: string) {
  const response = await fetch(url, { method: 'POST', headers: cb.headers, body });
  const text = await response.text();
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    json = undefined;
  }
  return { status: response.status, json, type: response.headers.get('content-type') };
}

describe.each(Object.entries(apps))('%s', (_name, start) => {
  it('processes a callback once, acknowledges the duplicate, and rejects forgeries with the right status', async () => {
    const onEvent = vi.fn();
    const { url } = await startApp(start, onEvent);
    const cb = await callback();

    const first = await post(url, cb, cb.raw);
    expect(first).toMatchObject({ status: 200, json: { ok: true, outcome: 'processed' } });
    expect(first.type).toContain('application/json');
    expect(onEvent).toHaveBeenCalledTimes(1);
    expect((onEvent.mock.calls[0]?.[0] as WebhookEvent).signed).toMatchObject({ webhook_id: cb.body.webhook_id, amount: 120.5 });

    expect(await post(url, cb, cb.raw)).toMatchObject({ status: 200, json: { ok: true, outcome: 'duplicate' } });
    expect(onEvent).toHaveBeenCalledTimes(1);

    const forged = await callback();
    const tampered = forged.raw.replace('"amount":120.5', '"amount":1205');
    expect(await post(url, forged, tampered)).toMatchObject({ status: 401, json: { ok: false, reason: 'invalid_signature' } });

    const stale = await callback({ timestamp: new Date(NOW - 301_000).toISOString() });
    expect(await post(url, stale, stale.raw)).toMatchObject({ status: 400, json: { reason: 'stale' } });

    const mismatched = await callback();
    expect(await post(url, { headers: { ...mismatched.headers, 'x-payment-id': 'PAY_OTHER' } }, mismatched.raw)).toMatchObject({
      status: 400,
      json: { reason: 'header_mismatch' },
    });

    expect((await post(url, cb, '{not json')).status).toBe(400);
    expect(onEvent).toHaveBeenCalledTimes(1);
  });

  it('answers 500 when the handler fails and runs it again on the retry', async () => {
    let calls = 0;
    const { url } = await startApp(start, () => {
      calls++;
      if (calls === 1) throw new Error('first attempt fails');
    });
    const cb = await callback();
    expect(await post(url, cb, cb.raw)).toMatchObject({ status: 500, json: { ok: false, outcome: 'failed' } });
    expect(await post(url, cb, cb.raw)).toMatchObject({ status: 200, json: { outcome: 'processed' } });
    expect(calls).toBe(2);
  });

  it('runs the handler once for concurrent duplicate deliveries', async () => {
    const onEvent = vi.fn(() => new Promise((r) => setTimeout(r, 200)));
    const { url } = await startApp(start, onEvent);
    const cb = await callback();
    const results = await Promise.all(Array.from({ length: 12 }, () => post(url, cb, cb.raw)));
    expect(onEvent).toHaveBeenCalledTimes(1);
    const outcomes = results.map((r) => (r.json as { outcome: string }).outcome);
    expect(outcomes.filter((o) => o === 'processed')).toHaveLength(1);
    // the others arrived while it ran (409, retried by the gateway) or, if slow, after it finished (200 duplicate)
    for (const r of results) {
      const outcome = (r.json as { outcome: string }).outcome;
      expect(r.status).toBe(outcome === 'in_flight' ? 409 : 200);
      expect(['processed', 'in_flight', 'duplicate']).toContain(outcome);
    }
    expect(outcomes.filter((o) => o === 'in_flight').length).toBeGreaterThan(0);
  });

  it('refuses an oversized body', async () => {
    const onEvent = vi.fn();
    const { url } = await startApp(start, onEvent);
    const cb = await callback();
    const huge = JSON.stringify({ ...cb.body, padding: 'x'.repeat(2_000_000) });
    const response = await post(url, cb, huge);
    expect([400, 413]).toContain(response.status);
    expect(onEvent).not.toHaveBeenCalled();
  });
});

describe('adapter details', () => {
  it('the fastify plugin keeps its raw parser to its own context', async () => {
    const app = Fastify();
    await app.register(fastifyWebhookPlugin, { path: PATH, verifier: { apiKey: API_KEY, clock: () => NOW }, onEvent: () => {} });
    app.post('/other', async (request) => ({ isObject: typeof request.body === 'object' && !Buffer.isBuffer(request.body) }));
    await app.ready();
    const other = await app.inject({ method: 'POST', url: '/other', payload: { a: 1 } });
    expect(other.json()).toEqual({ isObject: true });
    const cb = await callback();
    const response = await app.inject({ method: 'POST', url: PATH, headers: cb.headers, payload: cb.raw });
    expect(response.statusCode).toBe(200);
    await app.close();
  });

  it('the web handler answers 405 to anything but POST', async () => {
    const handler = createWebHandler({ verifier: { apiKey: API_KEY }, onEvent: () => {} });
    const response = await handler(new Request('http://x/webhooks', { method: 'GET' }));
    expect(response.status).toBe(405);
    expect(response.headers.get('allow')).toBe('POST');
  });

  it('koa with a path passes other requests on', async () => {
    const app = new Koa();
    app.use(createKoaMiddleware({ verifier: { apiKey: API_KEY }, onEvent: () => {} }, { path: PATH }));
    app.use((ctx) => {
      ctx.body = 'next';
    });
    const { url, close } = await listen(createServer(app.callback()));
    running.push({ url, close });
    const response = await fetch(url.replace(PATH, '/elsewhere'));
    expect(await response.text()).toBe('next');
  });

  it('the web handler verifies on the Web Crypto path (Workers, Edge) as well', async () => {
    const onEvent = vi.fn();
    const handler = createWebHandler({ verifier: { apiKey: API_KEY, clock: () => NOW, crypto: 'web' }, onEvent });
    const cb = await callback();
    const ok = await handler(new Request('http://x/webhooks', { method: 'POST', headers: cb.headers, body: cb.raw }));
    expect(ok.status).toBe(200);
    const forged = await handler(new Request('http://x/webhooks', { method: 'POST', headers: cb.headers, body: cb.raw.replace('"amount":120.5', '"amount":1') }));
    expect(forged.status).toBe(401);
    expect(onEvent).toHaveBeenCalledTimes(1);
  });

  it('adapters accept handler options with maxBodyBytes mixed in', async () => {
    const handler = createWebHandler({ verifier: { apiKey: API_KEY, clock: () => NOW }, onEvent: () => {}, maxBodyBytes: 100 });
    const cb = await callback();
    const response = await handler(new Request('http://x/webhooks', { method: 'POST', headers: cb.headers, body: cb.raw }));
    expect(response.status).toBe(413);
  });
});
