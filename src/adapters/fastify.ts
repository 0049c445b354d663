/**
 * Fastify 4 and 5. Use the route handler behind Fastify's own JSON parser (the
 * signature covers fields, so the parsed object verifies), or register the plugin to
 * get the route with the raw body kept, in its own encapsulated context.
 *
 * @module
 */
import type { IncomingMessage } from 'node:http';
import { handleBody, nodeRequestBody, resolveAdapter, type WebhookAdapterInput, type WebhookAdapterOptions } from './shared.js';

/** The part of Fastify's request the handler uses. */
export interface FastifyRequestLike {
  /** The body as Fastify parsed it (or the raw bytes, inside the plugin). */
  body: unknown;
  /** Request headers. */
  headers: IncomingMessage['headers'];
  /** The underlying Node request. */
  raw: IncomingMessage;
}

/** The part of Fastify's reply the handler uses. */
export interface FastifyReplyLike {
  /** Sets the status code. */
  code(statusCode: number): FastifyReplyLike;
  /** Sets a response header. */
  header(key: string, value: string): FastifyReplyLike;
  /** Sends the response. */
  send(payload?: unknown): FastifyReplyLike;
}

/**
 * A Fastify route handler for the callback route.
 *
 * @example
 * ```ts
 * app.post('/webhooks/myr', createFastifyHandler({ verifier: { apiKey }, onEvent }));
 * ```
 */
export function createFastifyHandler(
  input: WebhookAdapterInput,
  options?: WebhookAdapterOptions,
): (request: FastifyRequestLike, reply: FastifyReplyLike) => Promise<FastifyReplyLike> {
  const { handler, maxBodyBytes } = resolveAdapter(input, options);
  return async (request, reply) => {
    const body = request.body !== undefined ? request.body : nodeRequestBody(request.raw, undefined, maxBodyBytes);
    const response = await handleBody(handler, body, request.headers);
    reply.code(response.status).header('content-type', 'application/json; charset=utf-8');
    for (const [name, value] of Object.entries(response.headers)) reply.header(name, value);
    return reply.send(response.body);
  };
}

/** The part of a Fastify instance the plugin uses. */
export interface FastifyInstanceLike {
  /** Registers a body parser (the plugin keeps the raw bytes, in its own context). */
  addContentTypeParser(
    contentType: string,
    options: { parseAs: 'buffer'; bodyLimit?: number },
    parser: (request: unknown, body: Buffer, done: (error: Error | null, body?: unknown) => void) => void,
  ): unknown;
  /** Adds a POST route. */
  post(path: string, handler: (request: FastifyRequestLike, reply: FastifyReplyLike) => Promise<FastifyReplyLike>): unknown;
}

/** Options of {@link fastifyWebhookPlugin}: the handler's (or `handler`), the route, the adapter's. */
export type FastifyWebhookPluginOptions = WebhookAdapterOptions & {
  /** The callback route. @default '/webhooks/myr' */
  path?: string | undefined;
} & (
    | {
        /** A ready handler, or the handler's options. */
        handler: WebhookAdapterInput;
      }
    | Exclude<
        WebhookAdapterInput,
        {
          /** A ready handler goes in `handler` instead. */
          handle: unknown;
        }
      >
  );

/**
 * A Fastify plugin that adds the callback route (POST `path`, default `/webhooks/myr`)
 * and, inside its own encapsulated context only, a JSON parser that keeps the raw
 * bytes. The rest of the app keeps Fastify's usual parser.
 *
 * @example
 * ```ts
 * await app.register(fastifyWebhookPlugin, { path: '/webhooks/myr', verifier: { apiKey }, onEvent });
 * ```
 */
export async function fastifyWebhookPlugin(instance: FastifyInstanceLike, options: FastifyWebhookPluginOptions): Promise<void> {
  const input = 'handler' in options ? options.handler : options;
  const maxBodyBytes = options.maxBodyBytes;
  instance.addContentTypeParser(
    'application/json',
    { parseAs: 'buffer', ...(maxBodyBytes === undefined ? {} : { bodyLimit: maxBodyBytes }) },
    (_request, body, done) => done(null, body),
  );
  instance.post(options.path ?? '/webhooks/myr', createFastifyHandler(input, { maxBodyBytes }));
}
