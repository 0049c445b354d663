/**
 * Delivers one signed callback to whatever webhook receiver a doc snippet built, the way the
 * framework itself would receive it: Fastify's inject, Hono's app.request and a Next.js route's
 * POST run in-process; Express and Koa apps are served on 127.0.0.1 with a free port for the
 * one request; a `createWebhookHandler` result is called directly.
 */
import { createServer, type RequestListener } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Express } from 'express';
import type { FastifyInstance } from 'fastify';
import type { Hono } from 'hono';
import type Koa from 'koa';
import type { SignedCallback, WebhookHandler } from '../../src/webhooks/index.js';
import { asListener } from '../helpers/real-server.js';

/** What the receiver answered. */
export interface Answer {
  status: number;
  body: string;
}

const PATH = '/webhooks/myr';

const hasMethods = (value: unknown, ...methods: string[]): boolean =>
  ((typeof value === 'object' && value !== null) || typeof value === 'function') &&
  methods.every((method) => typeof (value as Record<string, unknown>)[method] === 'function');

// Told apart by the methods only each has (an Express app is a function with listen and post).
const isFastify = (value: unknown): value is FastifyInstance => hasMethods(value, 'inject', 'register', 'ready');
const isHono = (value: unknown): value is Hono => hasMethods(value, 'request', 'fetch', 'post');
const isKoa = (value: unknown): value is Koa => hasMethods(value, 'callback', 'use') && !hasMethods(value, 'post');
const isExpress = (value: unknown): value is Express => typeof value === 'function' && hasMethods(value, 'listen', 'post', 'handle');
const isWebhookHandler = (value: unknown): value is WebhookHandler => hasMethods(value, 'handle');
const isRoute = (value: unknown): value is (request: Request) => Promise<Response> => typeof value === 'function' && value.name === 'POST';

/** The kind of receiver `value` is, or undefined when it is none. */
export function receiverKind(value: unknown): 'fastify' | 'hono' | 'koa' | 'express' | 'handler' | 'route' | undefined {
  if (isFastify(value)) return 'fastify';
  if (isHono(value)) return 'hono';
  if (isKoa(value)) return 'koa';
  if (isExpress(value)) return 'express';
  if (isWebhookHandler(value)) return 'handler';
  if (isRoute(value)) return 'route';
  return undefined;
}

/** Serves `listener` on 127.0.0.1 for one POST. */
async function overHttp(listener: RequestListener, path: string, init: RequestInit): Promise<Answer & { location: string | null }> {
  const server = createServer(listener);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  try {
    const { port } = server.address() as AddressInfo;
    const response = await fetch(`http://127.0.0.1:${port}${path}`, { method: 'POST', redirect: 'manual', ...init });
    return { status: response.status, body: await response.text(), location: response.headers.get('location') };
  } finally {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  }
}

/** POSTs `callback` to `receiver` at /webhooks/myr (or `path`) and returns its answer. */
export async function deliver(receiver: unknown, callback: SignedCallback, path = PATH): Promise<Answer> {
  const { headers, rawBody } = callback;
  if (isFastify(receiver)) {
    await receiver.ready();
    const answer = await receiver.inject({ method: 'POST', url: path, headers, payload: rawBody });
    return { status: answer.statusCode, body: answer.body };
  }
  if (isHono(receiver)) {
    const response = await receiver.request(path, { method: 'POST', headers, body: rawBody });
    return { status: response.status, body: await response.text() };
  }
  if (isKoa(receiver)) return overHttp(asListener(receiver.callback()), path, { headers, body: rawBody });
  if (isExpress(receiver)) return overHttp(receiver, path, { headers, body: rawBody });
  if (isWebhookHandler(receiver)) {
    const answer = await receiver.handle({ body: rawBody, headers });
    return { status: answer.status, body: JSON.stringify(answer.body) };
  }
  if (isRoute(receiver)) {
    const response = await receiver(new Request(`https://shop.example${path}`, { method: 'POST', headers, body: rawBody }));
    return { status: response.status, body: await response.text() };
  }
  throw new Error('not a webhook receiver this runner knows');
}

/** POSTs `json` to an Express app at `path` (not a callback: a shop's own route). */
export function request(app: unknown, path: string, json: unknown): Promise<Answer & { location: string | null }> {
  if (!isExpress(app)) throw new Error('request() serves Express apps only');
  return overHttp(app, path, { headers: { 'content-type': 'application/json' }, body: JSON.stringify(json) });
}
