/**
 * Koa 2 and 3. Works behind `@koa/bodyparser` / `koa-bodyparser` (uses `rawBody` or
 * the parsed `body`) and without any parser (reads the stream).
 *
 * @module
 */
import type { IncomingMessage } from 'node:http';
import {
  handleBody,
  nodeRequestBody,
  resolveAdapter,
  responseText,
  type WebhookAdapterInput,
  type WebhookAdapterOptions,
} from './shared.js';

/** The part of Koa's `Context` the middleware uses. */
export interface KoaContextLike {
  /** The underlying Node request. */
  req: IncomingMessage;
  /** Koa's request, with what a body parser left on it. */
  request: {
    /** The parsed body, when a body parser ran. */
    body?: unknown;
    /** The raw body text, when a body parser kept it. */
    rawBody?: unknown;
  };
  /** HTTP method. */
  method: string;
  /** Request path. */
  path: string;
  /** Response status. */
  status: number;
  /** Response body. */
  body: unknown;
  /** Response content type. */
  type: string;
  /** Sets a response header. */
  set(field: string, value: string): void;
}

/** Options of {@link createKoaMiddleware}. */
export interface KoaWebhookOptions extends WebhookAdapterOptions {
  /** Only answer POSTs to this path and pass everything else to `next`. Leave out when mounted on a router route. */
  path?: string | undefined;
}

/**
 * Koa middleware for the callback route.
 *
 * @example
 * ```ts
 * import Koa from 'koa';
 * import { createKoaMiddleware } from 'myr-gateway/webhooks';
 *
 * const app = new Koa();
 * app.use(createKoaMiddleware({ verifier: { apiKey }, onEvent }, { path: '/webhooks/myr' }));
 * ```
 */
export function createKoaMiddleware<Tx = undefined>(
  input: WebhookAdapterInput<Tx>,
  options?: KoaWebhookOptions,
): (ctx: KoaContextLike, next?: () => Promise<unknown>) => Promise<void> {
  const { handler, limits } = resolveAdapter(input, options);
  const path = options?.path ?? (input as KoaWebhookOptions).path; // a WebhookHandler has no path (undefined); the options form may carry one
  return async (ctx, next) => {
    if (path !== undefined && (ctx.path !== path || ctx.method !== 'POST')) {
      if (next) await next();
      return;
    }
    const parsed = typeof ctx.request.rawBody === 'string' ? ctx.request.rawBody : ctx.request.body;
    const response = await handleBody(handler, nodeRequestBody(ctx.req, parsed, limits), ctx.req.headers);
    ctx.status = response.status;
    for (const [name, value] of Object.entries(response.headers)) ctx.set(name, value);
    ctx.type = 'application/json';
    ctx.body = responseText(response);
  };
}
