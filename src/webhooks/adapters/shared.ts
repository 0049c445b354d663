/**
 * What every adapter shares: options, reading a Node request body whether or not a
 * body parser ran first, and the JSON answer.
 *
 * @module
 */
import type { IncomingMessage } from 'node:http';
import { ConfigurationError } from '../../core/errors/base.js';
import { milliseconds } from '../../core/milliseconds.js';
import { WebhookVerificationError } from '../errors.js';
import { toWebhookHandler } from '../handler.js';
import { webhookLog } from '../log.js';
import type { WebhookHandler, WebhookHandlerOptions, WebhookResponse } from '../handler-options.js';
import { BodyTimeoutError, BodyTooLargeError, checkParsedBody, readNodeStream, type BodyLimits } from './body.js';

/** Options every adapter takes on top of the handler's. */
export interface WebhookAdapterOptions {
  /**
   * Largest body read from the wire, in bytes; larger ones get 413 as soon as the read
   * passes it (the rest is not buffered), or before reading when Content-Length says so.
   * Callbacks are a few hundred bytes. The one limit of every adapter.
   *
   * @example
   * ```ts
   * createExpressMiddleware({ verifier, onEvent, maxBodyBytes: 16_384 });
   * ```
   *
   * @default 65_536
   */
  maxBodyBytes?: number | undefined;
  /**
   * How long the whole body may take to arrive, in ms; a slower one gets 408. The
   * gateway sends its few hundred bytes at once, so only a stalling sender hits this.
   * A whole number from 1 to 2^31 − 1 (a timer's ceiling); anything else is a
   * `ConfigurationError` when the adapter is made.
   *
   * @example
   * ```ts
   * createNodeHandler({ verifier, onEvent, bodyTimeoutMs: 5_000 });
   * ```
   *
   * @default 10_000
   */
  bodyTimeoutMs?: number | undefined;
}

/** An adapter takes a ready handler, or the handler's options (adapter options may be mixed in). */
export type WebhookAdapterInput<Tx = undefined> = WebhookHandler | (WebhookHandlerOptions<Tx> & WebhookAdapterOptions);

/** An adapter option, from the adapter's options first, else from the handler's (either form of input may carry it). */
function given<Tx>(
  name: keyof WebhookAdapterOptions,
  input: WebhookAdapterInput<Tx>,
  options: WebhookAdapterOptions | undefined,
): unknown {
  return options?.[name] ?? (input as WebhookAdapterOptions)[name]; // an absent one is undefined
}

function byteLimit(value: unknown): number {
  if (typeof value !== 'number' || !Number.isFinite(value) || value <= 0) {
    throw new ConfigurationError('maxBodyBytes must be a positive number', 'maxBodyBytes');
  }
  return value;
}

/** @internal Resolves the handler and the body limits of an adapter factory. */
export function resolveAdapter<Tx>(
  input: WebhookAdapterInput<Tx>,
  options: WebhookAdapterOptions | undefined,
): { handler: WebhookHandler; limits: BodyLimits } {
  const handler = toWebhookHandler(input);
  const limits = {
    maxBodyBytes: byteLimit(given('maxBodyBytes', input, options) ?? 65_536),
    // The SDK's one millisecond rule: a timer given more than it holds would fire after 1 ms.
    bodyTimeoutMs: milliseconds(given('bodyTimeoutMs', input, options) ?? 10_000, 'bodyTimeoutMs'),
  };
  return { handler, limits };
}

/** @internal The answer for a body over the limit (the Node readers then close the connection after a short drain). */
export const TOO_LARGE: WebhookResponse = {
  status: 413,
  body: { ok: false, outcome: 'rejected', reason: 'malformed' },
  headers: {},
};

/** The answer for a body that did not arrive within the read timeout. */
const BODY_TIMEOUT: WebhookResponse = {
  status: 408,
  body: { ok: false, outcome: 'rejected', reason: 'malformed' },
  headers: {},
};

/** The answer for a request whose body could not be read. */
const UNREADABLE: WebhookResponse = {
  status: 400,
  body: { ok: false, outcome: 'rejected', reason: 'malformed' },
  headers: {},
};

/** @internal A Node request as the frameworks hand it over, maybe with a parsed body. */
export type NodeRequestLike = IncomingMessage & { body?: unknown; _body?: unknown };

/**
 * @internal The body to verify: what a body parser left when one consumed the stream
 * (raw Buffer, string, or parsed object; refused when over the limit), else the bytes
 * read from the stream here.
 */
export function nodeRequestBody(req: NodeRequestLike, parsed: unknown, limits: BodyLimits): Promise<unknown> {
  if (req.readableEnded || req._body === true) {
    try {
      return Promise.resolve(checkParsedBody(parsed, req.headers['content-length'], limits.maxBodyBytes));
    } catch (error) {
      return Promise.reject(error);
    }
  }
  return readNodeStream(req, limits);
}

/** @internal The answer for a body that could not be had. */
export function bodyFailure(error: unknown): WebhookResponse {
  if (error instanceof BodyTooLargeError) return TOO_LARGE;
  if (error instanceof BodyTimeoutError) return BODY_TIMEOUT;
  return UNREADABLE;
}

/** @internal Logs, through the handler's logger, a callback refused before the handler saw it. */
export function logRefusedBody(handler: WebhookHandler, response: WebhookResponse, why?: string): WebhookResponse {
  why ??=
    response.status === 413
      ? 'larger than maxBodyBytes'
      : response.status === 408
        ? 'slower than bodyTimeoutMs'
        : 'unreadable';
  webhookLog(handler.logger)(
    'warn',
    new WebhookVerificationError('malformed', `a callback body was refused (${response.status}): ${why}`),
  );
  return response;
}

/** @internal What the log line says when a parser reshaped the body: the cause, and the fix. */
export const RESHAPED =
  'a body parser reshaped the callback body (amount is not a number, or webhook_id was renamed) and the signature covers the fields as sent; ' +
  'on Fastify register fastifyWebhookPlugin, elsewhere give this route a raw parser (express.raw()) or none';

/**
 * @internal True when a parsed body shows a parser's hand: `amount` that is not a number
 * (numbers turned into strings or decimals), or `webhook_id` missing beside a renamed form of
 * it (`webhookId`, `WebhookId`, `webhook-id`). Such a body can never verify.
 */
export function reshapedByParser(body: unknown): boolean {
  if (body === null || typeof body !== 'object' || body instanceof Uint8Array || body instanceof ArrayBuffer)
    return false;
  const fields = body as Record<string, unknown>; // a parsed JSON object; only read here
  if (fields.amount !== undefined && typeof fields.amount !== 'number') return true;
  return (
    fields.webhook_id === undefined &&
    Object.keys(fields).some((key) => key !== 'webhook_id' && key.replace(/[-_]/g, '').toLowerCase() === 'webhookid')
  );
}

/** @internal Runs the handler on a body that may still be being read. */
export async function handleBody(
  handler: WebhookHandler,
  body: Promise<unknown>,
  headers: unknown,
): Promise<WebhookResponse> {
  let value: unknown;
  try {
    value = await body;
  } catch (error) {
    return logRefusedBody(handler, bodyFailure(error));
  }
  // Refused (400, so the gateway retries) with a line that names the fix, not the field the verifier trips on.
  if (reshapedByParser(value)) return logRefusedBody(handler, UNREADABLE, RESHAPED);
  return handler.handle({ body: value, headers: headers as never }); // the handler reads headers through getHeader, which checks every value
}

/** @internal The JSON text of an answer. */
export function responseText(response: WebhookResponse): string {
  return JSON.stringify(response.body);
}
