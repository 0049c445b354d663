/**
 * Hono (any runtime). Reads the body through `c.req`, which Hono caches, so a
 * validator or `c.req.json()` earlier in the chain does not break verification.
 *
 * @module
 */
import { TOO_LARGE, UNREADABLE, resolveAdapter, type WebhookAdapterInput, type WebhookAdapterOptions } from './shared.js';
import { toWebResponse } from './web.js';

/** The part of Hono's `Context` the handler uses. */
export interface HonoContextLike {
  /** Hono's request wrapper. */
  req: {
    /** The Web `Request`. */
    raw: Request;
    /** The body bytes (Hono caches them, so an earlier reader does not consume them). */
    arrayBuffer(): Promise<ArrayBuffer>;
  };
}

/**
 * A Hono handler for the callback route.
 *
 * @example
 * ```ts
 * import { Hono } from 'hono';
 * import { createHonoHandler } from 'myr-gateway/webhooks';
 *
 * const app = new Hono();
 * app.post('/webhooks/myr', createHonoHandler({ verifier: { apiKey: env.MYR_API_KEY }, onEvent }));
 * ```
 */
export function createHonoHandler(input: WebhookAdapterInput, options?: WebhookAdapterOptions): (c: HonoContextLike) => Promise<Response> {
  const { handler, maxBodyBytes } = resolveAdapter(input, options);
  return async (c) => {
    const headers = c.req.raw.headers;
    if (Number(headers.get('content-length')) > maxBodyBytes) return toWebResponse(TOO_LARGE);
    let body: Uint8Array;
    try {
      body = new Uint8Array(await c.req.arrayBuffer());
    } catch {
      return toWebResponse(UNREADABLE);
    }
    if (body.length > maxBodyBytes) return toWebResponse(TOO_LARGE);
    return toWebResponse(await handler.handle({ body, headers }));
  };
}
