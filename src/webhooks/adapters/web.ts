/**
 * Web-standard `(request: Request) => Promise<Response>`: Next.js App Router route
 * handlers, Bun.serve, Deno.serve, Cloudflare Workers, Vercel Edge.
 *
 * @module
 */
import type { WebhookHandler, WebhookResponse } from '../handler-options.js';
import { declaredTooLarge, readWebStream, type BodyLimits } from './body.js';
import {
  TOO_LARGE,
  bodyFailure,
  logRefusedBody,
  resolveAdapter,
  responseText,
  type WebhookAdapterInput,
  type WebhookAdapterOptions,
} from './shared.js';

/** A Web `Response` for an answer. */
function toWebResponse(response: WebhookResponse): Response {
  return new Response(responseText(response), {
    status: response.status,
    headers: { 'content-type': 'application/json; charset=utf-8', ...response.headers },
  });
}

/**
 * @internal Answers a Web request: the body is streamed under the limits (413 before
 * reading when Content-Length is over the limit), then handed to the handler.
 */
export async function answerWebRequest(
  handler: WebhookHandler,
  request: Request,
  limits: BodyLimits,
  read: () => Promise<Uint8Array> = () => readWebStream(request.body, limits),
): Promise<Response> {
  if (declaredTooLarge(request.headers.get('content-length'), limits.maxBodyBytes))
    return toWebResponse(logRefusedBody(handler, TOO_LARGE));
  let body: Uint8Array;
  try {
    body = await read();
  } catch (error) {
    return toWebResponse(logRefusedBody(handler, bodyFailure(error)));
  }
  return toWebResponse(await handler.handle({ body, headers: request.headers }));
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
export function createWebHandler<Tx = undefined>(
  input: WebhookAdapterInput<Tx>,
  options?: WebhookAdapterOptions,
): (request: Request) => Promise<Response> {
  const { handler, limits } = resolveAdapter(input, options);
  return async (request) => {
    if (request.method !== 'POST') {
      return new Response(JSON.stringify({ ok: false, outcome: 'rejected' }), {
        status: 405,
        headers: { 'content-type': 'application/json; charset=utf-8', allow: 'POST' },
      });
    }
    return answerWebRequest(handler, request, limits);
  };
}
