/**
 * What every adapter shares: options, reading a Node request body whether or not a
 * body parser ran first, and the JSON answer.
 *
 * @module
 */
import type { IncomingMessage } from 'node:http';
import { toWebhookHandler, type WebhookHandler, type WebhookHandlerOptions, type WebhookResponse } from '../webhooks/handler.js';

/** Options every adapter takes on top of the handler's. */
export interface WebhookAdapterOptions {
  /**
   * Largest body read from the wire, in bytes; larger ones get 413. Callbacks are a
   * few hundred bytes.
   *
   * @default 65_536
   */
  maxBodyBytes?: number | undefined;
}

/** An adapter takes a ready handler, or the handler's options (adapter options may be mixed in). */
export type WebhookAdapterInput = WebhookHandler | (WebhookHandlerOptions & WebhookAdapterOptions);

/** @internal */
export const DEFAULT_MAX_BODY_BYTES = 65_536;

/** @internal Resolves the handler and the adapter options of an adapter factory. */
export function resolveAdapter(
  input: WebhookAdapterInput,
  options: WebhookAdapterOptions | undefined,
): { handler: WebhookHandler; maxBodyBytes: number } {
  const handler = toWebhookHandler(input);
  const maxBodyBytes = options?.maxBodyBytes ?? (input as WebhookAdapterOptions).maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES;
  return { handler, maxBodyBytes };
}

/** @internal The answer for a body over the limit. */
export const TOO_LARGE: WebhookResponse = {
  status: 413,
  body: { ok: false, outcome: 'rejected', reason: 'malformed' },
  headers: {},
};

/** @internal The answer for a request whose body could not be read. */
export const UNREADABLE: WebhookResponse = {
  status: 400,
  body: { ok: false, outcome: 'rejected', reason: 'malformed' },
  headers: {},
};

/** @internal Thrown by the body readers when the body is over the limit. */
export class BodyTooLargeError extends Error {
  override name = 'BodyTooLargeError';
}

/** @internal A Node request as the frameworks hand it over, maybe with a parsed body. */
export type NodeRequestLike = IncomingMessage & { body?: unknown; _body?: unknown };

/**
 * @internal The body to verify: what a body parser left when one consumed the stream
 * (raw Buffer, string, or parsed object), else the bytes read from the stream here.
 */
export function nodeRequestBody(req: NodeRequestLike, parsed: unknown, maxBodyBytes: number): Promise<unknown> | unknown {
  if (req.readableEnded || req._body === true) return parsed;
  return readNodeStream(req, maxBodyBytes);
}

/** @internal Reads a Node request stream into one Uint8Array, up to `maxBodyBytes`. */
export function readNodeStream(req: IncomingMessage, maxBodyBytes: number): Promise<Uint8Array> {
  const declared = Number(req.headers['content-length']);
  if (declared > maxBodyBytes) return Promise.reject(new BodyTooLargeError());
  return new Promise((resolve, reject) => {
    const chunks: Uint8Array[] = [];
    let size = 0;
    const cleanup = () => {
      req.off('data', onData);
      req.off('end', onEnd);
      req.off('error', onError);
    };
    const onData = (chunk: Uint8Array | string) => {
      const bytes = typeof chunk === 'string' ? new TextEncoder().encode(chunk) : chunk;
      size += bytes.length;
      if (size > maxBodyBytes) {
        cleanup();
        req.resume(); // drain the rest so the connection can answer
        reject(new BodyTooLargeError());
        return;
      }
      chunks.push(bytes);
    };
    const onEnd = () => {
      cleanup();
      const out = new Uint8Array(size);
      let at = 0;
      for (const chunk of chunks) {
        out.set(chunk, at);
        at += chunk.length;
      }
      resolve(out);
    };
    const onError = (error: unknown) => {
      cleanup();
      reject(error instanceof Error ? error : new Error('request stream failed'));
    };
    req.on('data', onData);
    req.on('end', onEnd);
    req.on('error', onError);
  });
}

/** @internal Runs the handler on a body that may still be being read. */
export async function handleBody(
  handler: WebhookHandler,
  body: Promise<unknown> | unknown,
  headers: unknown,
): Promise<WebhookResponse> {
  let value: unknown;
  try {
    value = await body;
  } catch (error) {
    return error instanceof BodyTooLargeError ? TOO_LARGE : UNREADABLE;
  }
  return handler.handle({ body: value, headers: headers as never });
}

/** @internal The JSON text of an answer. */
export function responseText(response: WebhookResponse): string {
  return JSON.stringify(response.body);
}
