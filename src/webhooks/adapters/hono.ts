/**
 * Hono (any runtime). Streams the body under the limit itself; when an earlier
 * middleware already read it (a validator, `c.req.json()`), takes it from Hono's cache.
 *
 * @module
 */
import { BodyTooLargeError } from './body.js';
import { resolveAdapter, type WebhookAdapterInput, type WebhookAdapterOptions } from './shared.js';
import { answerWebRequest } from './web.js';

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
export function createHonoHandler<Tx = undefined>(
  input: WebhookAdapterInput<Tx>,
  options?: WebhookAdapterOptions,
): (c: HonoContextLike) => Promise<Response> {
  const { handler, limits } = resolveAdapter(input, options);
  return (c) => {
    const raw = c.req.raw;
    if (!raw.bodyUsed) return answerWebRequest(handler, raw, limits);
    // Read (without a limit of ours) by an earlier middleware: Hono cached it; refuse it when over ours.
    return answerWebRequest(handler, raw, limits, async () => {
      const bytes = new Uint8Array(await c.req.arrayBuffer());
      if (bytes.byteLength > limits.maxBodyBytes) throw new BodyTooLargeError();
      return bytes;
    });
  };
}
