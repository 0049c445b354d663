/**
 * Plain `node:http` (and anything built on it that hands over `req`/`res`).
 *
 * @module
 */
import type { ServerResponse } from 'node:http';
import {
  handleBody,
  nodeRequestBody,
  resolveAdapter,
  responseText,
  type NodeRequestLike,
  type WebhookAdapterInput,
  type WebhookAdapterOptions,
} from './shared.js';
import { WebhookHandlerError } from '../errors.js';
import type { WebhookHandler, WebhookHandlerOptions, WebhookResponse } from '../handler-options.js';
import { webhookLog } from '../log.js';

/** @internal Writes an answer to a Node response. */
export function writeNodeResponse(res: ServerResponse, response: WebhookResponse): void {
  if (res.headersSent) return;
  res.statusCode = response.status;
  res.setHeader('content-type', 'application/json; charset=utf-8');
  for (const [name, value] of Object.entries(response.headers)) res.setHeader(name, value);
  res.end(responseText(response));
}

/**
 * What a listener does when answering failed outside the handler (which never throws): one
 * error line, `onError` (whatever it does is swallowed), then a 500 if nothing was sent yet,
 * else the connection is closed (the gateway sees no 2xx, so it retries).
 */
function listenerFailed(
  handler: WebhookHandler,
  onError: WebhookHandlerOptions['onError'],
  res: ServerResponse,
  cause: unknown,
): void {
  const error = new WebhookHandlerError('handler', 'the node listener failed to answer the callback', cause);
  webhookLog(handler.logger)('error', error);
  try {
    Promise.resolve(onError?.(error)).catch(() => {});
  } catch {
    // A throwing onError must not change the answer either.
  }
  try {
    if (res.headersSent) res.destroy();
    else writeNodeResponse(res, FAILED);
  } catch {
    res.destroy();
  }
}

const FAILED: WebhookResponse = { status: 500, body: { ok: false, outcome: 'failed' }, headers: {} };

/**
 * A `(req, res)` listener for `node:http` servers: a plain listener that returns nothing
 * (so `createServer(createNodeHandler(…))` passes typed lint such as `no-misused-promises`).
 * It answers every request itself; a failure while answering goes to `onError` and the
 * logger, and the gateway gets a 500. Uses `req.body` when a body parser already consumed
 * the stream, else reads the stream itself.
 *
 * @example
 * ```ts
 * import { createServer } from 'node:http';
 * createServer(createNodeHandler({ verifier: { apiKey }, onEvent })).listen(3000);
 * ```
 */
export function createNodeHandler<Tx = undefined>(
  input: WebhookAdapterInput<Tx>,
  options?: WebhookAdapterOptions,
): (req: NodeRequestLike, res: ServerResponse) => void {
  const { handler, limits } = resolveAdapter(input, options);
  const onError = 'handle' in input ? undefined : input.onError; // a ready handler keeps its onError to itself
  return (req, res) => {
    handleBody(handler, nodeRequestBody(req, req.body, limits), req.headers)
      .then((response) => writeNodeResponse(res, response))
      .catch((error: unknown) => listenerFailed(handler, onError, res, error));
  };
}
