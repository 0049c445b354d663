/**
 * Fastify 4 and 5. Use the route handler behind Fastify's own JSON parser (the
 * signature covers fields, so the parsed object verifies), or register the plugin to
 * get the route with the raw body kept, in its own encapsulated context.
 *
 * @module
 */
import type { IncomingMessage } from 'node:http';
import { checkParsedBody, readNodeStream } from './body.js';
import {
  handleBody,
  nodeRequestBody,
  resolveAdapter,
  type WebhookAdapterInput,
  type WebhookAdapterOptions,
} from './shared.js';

/** What the plugin's parser hands the route when it refused the body. */
class BodyRefusal {
  constructor(readonly error: unknown) {}
}

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
 * A Fastify route handler for the callback route. Behind Fastify's own parser the body
 * was read under the route's `bodyLimit` (Fastify's default is 1 MiB): give the route
 * `bodyLimit: 65_536` (or use {@link fastifyWebhookPlugin}, which does) so that Fastify
 * stops reading at the same limit. The handler refuses (413) a parsed body whose
 * Content-Length or size is over `maxBodyBytes` either way.
 *
 * @example
 * ```ts
 * app.post('/webhooks/myr', { bodyLimit: 65_536 }, createFastifyHandler({ verifier: { apiKey }, onEvent }));
 * ```
 */
export function createFastifyHandler<Tx = undefined>(
  input: WebhookAdapterInput<Tx>,
  options?: WebhookAdapterOptions,
): (request: FastifyRequestLike, reply: FastifyReplyLike) => Promise<FastifyReplyLike> {
  const { handler, limits } = resolveAdapter(input, options);
  return async (request, reply) => {
    const parsed = request.body;
    const body =
      parsed instanceof BodyRefusal
        ? Promise.reject(parsed.error)
        : parsed !== undefined
          ? new Promise((resolve) =>
              resolve(checkParsedBody(parsed, request.headers['content-length'], limits.maxBodyBytes)),
            )
          : nodeRequestBody(request.raw, undefined, limits);
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
    parser: (request: unknown, payload: IncomingMessage, done: (error: Error | null, body?: unknown) => void) => void,
  ): unknown;
  /** Removes the parsers this context inherited (the plugin's context only). */
  removeAllContentTypeParsers(): unknown;
  /** Adds a POST route. */
  post(
    path: string,
    options: { bodyLimit: number },
    handler: (request: FastifyRequestLike, reply: FastifyReplyLike) => Promise<FastifyReplyLike>,
  ): unknown;
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
 * with `bodyLimit` set to `maxBodyBytes` (Fastify stops reading there and answers 413),
 * and, inside its own encapsulated context only, parsers that keep the raw bytes of any
 * content type, in place of whatever parsers the app registered before or after it. The
 * rest of the app keeps its own parsers and limit.
 *
 * @example
 * ```ts
 * await app.register(fastifyWebhookPlugin, { path: '/webhooks/myr', verifier: { apiKey }, onEvent });
 * ```
 */
// Fastify tells plugin styles apart by their shape: an async function of two parameters is
// awaited (a `done` callback would be a third). `async` also makes a configuration error a
// rejected plugin, which `register` reports, rather than a throw from inside Fastify's loader.
// eslint-disable-next-line @typescript-eslint/require-await -- the promise is the plugin contract, see above
export async function fastifyWebhookPlugin(
  instance: FastifyInstanceLike,
  options: FastifyWebhookPluginOptions,
): Promise<void> {
  const input = 'handler' in options ? options.handler : options;
  const { handler, limits } = resolveAdapter(input, options);
  // Our own reader, not Fastify's: it stops at the limit, and the refusal goes to our handler
  // (Fastify's error path would close the socket before a sender still writing reads the 413).
  const keepRaw = (
    _request: unknown,
    payload: IncomingMessage,
    done: (error: Error | null, body?: unknown) => void,
  ) => {
    readNodeStream(payload, limits).then(
      (bytes) => done(null, bytes),
      (error: unknown) => done(null, new BodyRefusal(error)),
    );
  };
  // This context inherits whatever parsers the app registered, before or after the plugin (Fastify
  // loads it later): adding ours over one of them throws FST_ERR_CTP_ALREADY_PRESENT. Clearing them
  // here touches this context only; the app's routes keep their parsers.
  instance.removeAllContentTypeParsers();
  instance.addContentTypeParser('application/json', keepRaw);
  instance.addContentTypeParser('*', keepRaw);
  const bodyLimit = limits.maxBodyBytes;
  instance.post(options.path ?? '/webhooks/myr', { bodyLimit }, createFastifyHandler(handler, limits));
}
