/**
 * Plain `node:http` (and anything built on it that hands over `req`/`res`).
 *
 * @module
 */
import type { ServerResponse } from 'node:http';
import { handleBody, nodeRequestBody, resolveAdapter, responseText, type NodeRequestLike, type WebhookAdapterInput, type WebhookAdapterOptions } from './shared.js';
import type { WebhookResponse } from '../webhooks/handler.js';

/** @internal Writes an answer to a Node response. */
export function writeNodeResponse(res: ServerResponse, response: WebhookResponse): void {
  if (res.headersSent) return;
  res.statusCode = response.status;
  res.setHeader('content-type', 'application/json; charset=utf-8');
  for (const [name, value] of Object.entries(response.headers)) res.setHeader(name, value);
  res.end(responseText(response));
}

/**
 * A `(req, res)` listener for `node:http` servers. Uses `req.body` when a body parser
 * already consumed the stream, else reads the stream itself.
 *
 * @example
 * ```ts
 * import { createServer } from 'node:http';
 * createServer(createNodeHandler({ verifier: { apiKey }, onEvent })).listen(3000);
 * ```
 */
export function createNodeHandler(
  input: WebhookAdapterInput,
  options?: WebhookAdapterOptions,
): (req: NodeRequestLike, res: ServerResponse) => Promise<void> {
  const { handler, limits } = resolveAdapter(input, options);
  return async (req, res) => {
    const response = await handleBody(handler, nodeRequestBody(req, req.body, limits), req.headers);
    writeNodeResponse(res, response);
  };
}
