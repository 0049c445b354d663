/**
 * Delivers one signed callback to whatever webhook receiver a doc snippet built, the way the
 * framework itself would receive it: Fastify's inject, Hono's app.request and a Next.js route's
 * POST run in-process; Express and Koa apps are served on 127.0.0.1 with a free port for the
 * one request; a `createWebhookHandler` result is called directly.
 */
import { createServer, type RequestListener } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { SignedCallback } from '../../src/webhooks/index.js';

/** What the receiver answered. */
export interface Answer {
  status: number;
  body: string;
}

const PATH = '/webhooks/myr';

type Fn = (...args: never[]) => unknown;
const isObjectOrFunction = (value: unknown): value is Record<string, unknown> =>
  (typeof value === 'object' && value !== null) || typeof value === 'function';
const has = (value: unknown, ...methods: string[]): value is Record<string, Fn> =>
  isObjectOrFunction(value) && methods.every((method) => typeof value[method] === 'function');

/** Serves `listener` on 127.0.0.1 for one request. */
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

/** The kind of receiver `value` is, or undefined when it is none. */
export function receiverKind(value: unknown): 'fastify' | 'hono' | 'koa' | 'express' | 'handler' | 'route' | undefined {
  if (has(value, 'inject', 'register')) return 'fastify';
  if (has(value, 'request', 'fetch', 'post')) return 'hono';
  if (has(value, 'callback', 'use')) return 'koa';
  if (typeof value === 'function' && has(value, 'listen', 'post')) return 'express';
  if (has(value, 'handle')) return 'handler';
  if (typeof value === 'function' && value.name === 'POST') return 'route';
  return undefined;
}

/** POSTs `callback` to `receiver` at /webhooks/myr (or `path`) and returns its answer. */
export async function deliver(receiver: unknown, callback: SignedCallback, path = PATH): Promise<Answer> {
  const kind = receiverKind(receiver);
  if (kind === 'fastify' && has(receiver, 'inject', 'ready')) {
    const app = receiver as unknown as { inject(o: object): Promise<{ statusCode: number; body: string }>; ready(): Promise<unknown> };
    await app.ready();
    const answer = await app.inject({ method: 'POST', url: path, headers: callback.headers, payload: callback.rawBody });
    return { status: answer.statusCode, body: answer.body };
  }
  if (kind === 'hono') {
    const app = receiver as unknown as { request(path: string, init: RequestInit): Promise<Response> };
    const response = await app.request(path, { method: 'POST', headers: callback.headers, body: callback.rawBody });
    return { status: response.status, body: await response.text() };
  }
  const init = { headers: callback.headers, body: callback.rawBody };
  if (kind === 'koa') return overHttp((receiver as unknown as { callback(): RequestListener }).callback(), path, init);
  if (kind === 'express') return overHttp(receiver as unknown as RequestListener, path, init);
  if (kind === 'route') {
    const POST = receiver as unknown as (request: Request) => Promise<Response>;
    const response = await POST(new Request(`https://shop.example${path}`, { method: 'POST', headers: callback.headers, body: callback.rawBody }));
    return { status: response.status, body: await response.text() };
  }
  if (kind === 'handler') {
    const handler = receiver as unknown as { handle(r: { body: string; headers: Record<string, string> }): Promise<{ status: number; body: unknown }> };
    const answer = await handler.handle({ body: callback.rawBody, headers: callback.headers });
    return { status: answer.status, body: JSON.stringify(answer.body) };
  }
  throw new Error('not a webhook receiver this runner knows');
}

/** POSTs `json` to an Express app at `path` (not a callback: a shop's own route). */
export function request(app: unknown, path: string, json: unknown): Promise<Answer & { location: string | null }> {
  if (receiverKind(app) !== 'express') throw new Error('request() serves Express apps only');
  return overHttp(app as RequestListener, path, { headers: { 'content-type': 'application/json' }, body: JSON.stringify(json) });
}
