/**
 * The webhook adapters mounted in real apps, the ways merchants mount them: shared by the
 * adapter tests, the abuse test and the abuse test's server process.
 */
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { serve } from '@hono/node-server';
import express5 from 'express';
import express4 from 'express4';
import Fastify from 'fastify';
import { Hono } from 'hono';
import Koa from 'koa';
import {
  createExpressMiddleware,
  createFastifyHandler,
  createHonoHandler,
  createKoaMiddleware,
  createNodeHandler,
  createWebHandler,
  fastifyWebhookPlugin,
  type WebhookHandler,
} from '../../src/webhooks/index.js';
import { asListener } from '../helpers/real-server.js';

export const PATH = '/webhooks/myr';

export interface Running {
  url: string;
  close: () => Promise<void>;
}

export function listen(server: Server): Promise<Running> {
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
  if (Number(req.headers['content-length']) > 1_000_000)
    return Promise.reject(Object.assign(new Error('too large'), { status: 413, expose: true }));
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => resolve(Buffer.concat(chunks)));
    req.on('error', reject);
  });
}

export type Start = (handler: WebhookHandler) => Promise<Running>;

interface ExpressLike {
  use(middleware: unknown): unknown;
  post(path: string, middleware: unknown): unknown;
}

function expressApp(app: ExpressLike, handler: WebhookHandler, parser?: unknown): Promise<Running> {
  if (parser) app.use(parser);
  app.post(PATH, createExpressMiddleware(handler));
  return listen(createServer(app as unknown as Parameters<typeof createServer>[1]));
}

/** Every adapter, in the ways merchants mount it, each in a real app on 127.0.0.1. */
export const apps: Record<string, Start> = {
  'express 5, no body parser': (h) => expressApp(express5(), h),
  'express 5, express.json()': (h) => expressApp(express5(), h, express5.json()),
  'express 5, express.raw()': (h) => expressApp(express5(), h, express5.raw({ type: '*/*' })),
  'express 5, express.text()': (h) => expressApp(express5(), h, express5.text({ type: '*/*' })),
  'express 4, no body parser': (h) => expressApp(express4(), h),
  'express 4, express.json()': (h) => expressApp(express4(), h, express4.json()),
  'express 4, json parser for another type (body {} but stream unread)': (h) =>
    expressApp(express4(), h, express4.json({ type: 'application/x-other' })),
  'fastify, built-in JSON parser': async (h) => {
    const app = Fastify();
    app.post(PATH, createFastifyHandler(h));
    await app.listen({ port: 0, host: '127.0.0.1' });
    const { port } = app.server.address() as AddressInfo;
    return { url: `http://127.0.0.1:${port}${PATH}`, close: () => app.close() };
  },
  'fastify, route bodyLimit as the docs say': async (h) => {
    const app = Fastify();
    app.post(PATH, { bodyLimit: 65_536 }, createFastifyHandler(h));
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
  // Another provider's webhooks often need the raw bytes: apps keep a raw-Buffer JSON parser for them.
  'fastify, plugin beside an app raw-Buffer JSON parser registered before it': async (h) => {
    const app = Fastify();
    app.addContentTypeParser('application/json', { parseAs: 'buffer' }, (_request, body, done) => done(null, body));
    await app.register(fastifyWebhookPlugin, { path: PATH, handler: h });
    await app.listen({ port: 0, host: '127.0.0.1' });
    const { port } = app.server.address() as AddressInfo;
    return { url: `http://127.0.0.1:${port}${PATH}`, close: () => app.close() };
  },
  'fastify, plugin beside app parsers (JSON and catch-all) registered after it': async (h) => {
    const app = Fastify();
    // Not awaited: the app goes on registering, and Fastify loads the plugin on listen.
    void app.register(fastifyWebhookPlugin, { path: PATH, handler: h });
    app.addContentTypeParser('application/json', { parseAs: 'buffer' }, (_request, body, done) => done(null, body));
    app.addContentTypeParser('*', { parseAs: 'string' }, (_request, body, done) => done(null, body));
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
    return listen(createServer(asListener(app.callback())));
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
    return listen(createServer(asListener(app.callback())));
  },
  'koa, rawBody kept by the parser': (h) => {
    const app = new Koa();
    app.use(async (ctx, next) => {
      const raw = (await readAll(ctx.req)).toString('utf8');
      Object.assign(ctx.request, { rawBody: raw, body: { replaced: true } });
      await next();
    });
    app.use(createKoaMiddleware(h, { path: PATH }));
    return listen(createServer(asListener(app.callback())));
  },
  'web handler on @hono/node-server': (h) => serveFetch(createWebHandler(h)),
  'node:http handler': (h) => listen(createServer(asListener(createNodeHandler(h)))),
};

export function serveFetch(fetch: (request: Request) => Response | Promise<Response>): Promise<Running> {
  return new Promise((resolve) => {
    const server = serve({ fetch, port: 0, hostname: '127.0.0.1' }, (info) => {
      resolve({
        url: `http://127.0.0.1:${info.port}${PATH}`,
        close: () => new Promise<void>((r) => server.close(() => r())),
      });
    });
  });
}
