/**
 * Web-standard `(request: Request) => Promise<Response>`: Next.js App Router route
 * handlers, Bun.serve, Deno.serve, Cloudflare Workers, Vercel Edge.
 *
 * @module
 */
import type { WebhookResponse } from '../webhooks/handler.js';
import { TOO_LARGE, UNREADABLE, resolveAdapter, responseText, type WebhookAdapterInput, type WebhookAdapterOptions } from './shared.js';

/** @internal A Web `Response` for an answer. */
export function toWebResponse(response: WebhookResponse): Response {
  return new Response(responseText(response), {
    status: response.status,
    headers: { 'content-type': 'application/json; charset=utf-8', ...response.headers },
  });
}

/** @internal Reads a Web request body up to the limit; null when over it. */
export async function readWebBody(request: Request, maxBodyBytes: number): Promise<Uint8Array | null> {
  if (Number(request.headers.get('content-length')) > maxBodyBytes) return null;
  const bytes = new Uint8Array(await request.arrayBuffer());
  return bytes.length > maxBodyBytes ? null : bytes;
}

/**
 * A Web-standard callback endpoint.
 *
 * @example
 * ```ts
 * // app/api/webhooks/myr/route.ts (Next.js App Router)
 * import { createWebHandler } from 'myr-gateway/webhooks';
 *
 * export const POST = createWebHandler({
 *   verifier: { apiKey: process.env.MYR_API_KEY! },
 *   async onEvent(event) { … },
 * });
 * ```
 */
export function createWebHandler(input: WebhookAdapterInput, options?: WebhookAdapterOptions): (request: Request) => Promise<Response> {
  const { handler, maxBodyBytes } = resolveAdapter(input, options);
  return async (request) => {
    if (request.method !== 'POST') {
      return new Response(JSON.stringify({ ok: false, outcome: 'rejected' }), {
        status: 405,
        headers: { 'content-type': 'application/json; charset=utf-8', allow: 'POST' },
      });
    }
    let body: Uint8Array | null;
    try {
      body = await readWebBody(request, maxBodyBytes);
    } catch {
      return toWebResponse(UNREADABLE);
    }
    if (body === null) return toWebResponse(TOO_LARGE);
    return toWebResponse(await handler.handle({ body, headers: request.headers }));
  };
}
