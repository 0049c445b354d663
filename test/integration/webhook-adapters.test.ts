/**
 * Every adapter in a real app listening on 127.0.0.1, with and without body parsers:
 * statuses, exactly-once, retries after a failure, concurrent duplicates, body limits.
 */
import { createServer } from 'node:http';
import Fastify from 'fastify';
import Koa from 'koa';
import { afterAll, describe, expect, it, vi } from 'vitest';
import {
  WebhookVerifier,
  createKoaMiddleware,
  createWebHandler,
  createWebhookHandler,
  fastifyWebhookPlugin,
  type WebhookEvent,
} from '../../src/webhooks/index.js';
import { API_KEY, NOW, callback, type Callback } from '../fixtures/webhook-vectors-helpers.js';
import { PATH, apps, listen, type Running, type Start } from './webhook-apps.js';
import { asListener } from '../helpers/real-server.js';

const running: Running[] = [];
afterAll(async () => {
  await Promise.all(running.map((r) => r.close()));
});

async function startApp(start: Start, onEvent: (event: WebhookEvent) => unknown) {
  const handler = createWebhookHandler({
    verifier: new WebhookVerifier({ apiKey: API_KEY, clock: () => NOW }),
    onEvent,
  });
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
    expect((onEvent.mock.calls[0]?.[0] as WebhookEvent).signed).toMatchObject({
      webhook_id: cb.body.webhook_id,
      amount: 120.5,
    });

    expect(await post(url, cb, cb.raw)).toMatchObject({ status: 200, json: { ok: true, outcome: 'duplicate' } });
    expect(onEvent).toHaveBeenCalledTimes(1);

    const forged = await callback();
    const tampered = forged.raw.replace('"amount":120.5', '"amount":1205');
    expect(await post(url, forged, tampered)).toMatchObject({
      status: 401,
      json: { ok: false, reason: 'invalid_signature' },
    });

    const stale = await callback({ timestamp: new Date(NOW - 301_000).toISOString() });
    expect(await post(url, stale, stale.raw)).toMatchObject({ status: 400, json: { reason: 'stale' } });

    const mismatched = await callback();
    expect(
      await post(url, { headers: { ...mismatched.headers, 'x-payment-id': 'PAY_OTHER' } }, mismatched.raw),
    ).toMatchObject({
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
    expect(response.status).toBe(413);
    expect(onEvent).not.toHaveBeenCalled();
  });
});

describe('adapter details', () => {
  it('the fastify plugin keeps its raw parser to its own context', async () => {
    const app = Fastify();
    await app.register(fastifyWebhookPlugin, {
      path: PATH,
      verifier: { apiKey: API_KEY, clock: () => NOW },
      onEvent: () => {},
    });
    app.post('/other', async (request) => ({
      isObject: typeof request.body === 'object' && !Buffer.isBuffer(request.body),
    }));
    await app.ready();
    const other = await app.inject({ method: 'POST', url: '/other', payload: { a: 1 } });
    expect(other.json()).toEqual({ isObject: true });
    const cb = await callback();
    const response = await app.inject({ method: 'POST', url: PATH, headers: cb.headers, payload: cb.raw });
    expect(response.statusCode).toBe(200);
    await app.close();
  });

  it("the fastify plugin leaves the app's own raw JSON parser to the app's routes", async () => {
    const app = Fastify();
    app.addContentTypeParser('application/json', { parseAs: 'buffer' }, (_request, body, done) => done(null, body));
    await app.register(fastifyWebhookPlugin, {
      path: PATH,
      verifier: { apiKey: API_KEY, clock: () => NOW },
      onEvent: () => {},
    });
    app.post('/other-provider', async (request) => ({ isBuffer: Buffer.isBuffer(request.body) }));
    await app.ready();
    const other = await app.inject({ method: 'POST', url: '/other-provider', payload: { a: 1 } });
    expect(other.json()).toEqual({ isBuffer: true });
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
    const { url, close } = await listen(createServer(asListener(app.callback())));
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
    const forged = await handler(
      new Request('http://x/webhooks', {
        method: 'POST',
        headers: cb.headers,
        body: cb.raw.replace('"amount":120.5', '"amount":1'),
      }),
    );
    expect(forged.status).toBe(401);
    expect(onEvent).toHaveBeenCalledTimes(1);
  });

  it('adapters accept handler options with maxBodyBytes mixed in', async () => {
    const handler = createWebHandler({
      verifier: { apiKey: API_KEY, clock: () => NOW },
      onEvent: () => {},
      maxBodyBytes: 100,
    });
    const cb = await callback();
    const response = await handler(
      new Request('http://x/webhooks', { method: 'POST', headers: cb.headers, body: cb.raw }),
    );
    expect(response.status).toBe(413);
  });
});
