/**
 * The mock served over a real node:http server on 127.0.0.1, for faults that need a
 * real socket (a connection dropped after the server processed the request).
 *
 * @module
 */
import { createServer, type IncomingMessage, type RequestListener, type ServerResponse } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import type { AddressInfo } from 'node:net';

/**
 * Options of `mock.serve()`.
 *
 * @example
 * ```ts
 * const server = await mock.serve({ port: 0 });
 * ```
 */
export interface ServeOptions {
  /**
   * Port to listen on; 0 picks a free one.
   * @default 0
   * @example await mock.serve({ port: 4010 })
   */
  port?: number;
  /**
   * Serve HTTPS with this key and certificate (PEM), the way the real service is reached.
   * Clients must trust the certificate (for example with `NODE_EXTRA_CA_CERTS`).
   * @example { key: readFileSync('key.pem'), cert: readFileSync('cert.pem') }
   */
  tls?: {
    /** PEM private key. */
    key: string | Buffer;
    /** PEM certificate. */
    cert: string | Buffer;
  };
}

/**
 * A running real-HTTP copy of the mock (same state, faults and recording).
 *
 * @example
 * ```ts
 * const server = await mock.serve();
 * await fetch(`${server.baseUrl}/auth/token`, { method: 'POST', body: '{}' });
 * await server.close();
 * ```
 */
export interface MockHttpServer {
  /** `http://127.0.0.1:<port>` (or `https://` with the `tls` option). */
  readonly origin: string;
  /** The origin plus the mock's base path, e.g. `http://127.0.0.1:53121/api/v1`. */
  readonly baseUrl: string;
  /** The port it listens on. */
  readonly port: number;
  /** Stops listening and closes open connections. */
  close(): Promise<void>;
}

async function readBody(req: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer); // no encoding is set on the request: chunks are Buffers
  return Buffer.concat(chunks);
}

/** Answers one node:http request through `dispatch` (a `networkError` answer destroys the socket). */
export async function answerThroughDispatch(
  dispatch: (request: Request) => Promise<Response>,
  origin: string,
  req: IncomingMessage,
  res: ServerResponse,
): Promise<void> {
  const body = await readBody(req);
  const headers = new Headers();
  for (const [name, value] of Object.entries(req.headers)) {
    if (value === undefined) continue;
    for (const v of Array.isArray(value) ? value : [value]) headers.append(name, v);
  }
  const method = req.method ?? 'GET';
  const request = new Request(`${origin}${req.url ?? '/'}`, {
    method,
    headers,
    ...(method === 'GET' || method === 'HEAD' ? {} : { body: new Uint8Array(body) }),
  });
  const response = await dispatch(request);
  if (response.type === 'error') {
    // The request was (possibly) processed; the answer is lost with the connection.
    req.socket.destroy();
    return;
  }
  const out: Record<string, string> = {};
  response.headers.forEach((value, name) => {
    out[name] = value;
  });
  res.writeHead(response.status, out);
  res.end(Buffer.from(await response.arrayBuffer()));
}

/** Starts a node:http (or node:https) server on 127.0.0.1 that answers through `dispatch`. */
export function serveOverHttp(
  dispatch: (request: Request) => Promise<Response>,
  basePath: string,
  options: ServeOptions = {},
): Promise<MockHttpServer> {
  return new Promise((resolve, reject) => {
    let origin = '';
    const listener: RequestListener = (req, res) => {
      answerThroughDispatch(dispatch, origin, req, res).catch((error: unknown) => {
        if (!res.headersSent) res.writeHead(500, { 'Content-Type': 'text/plain' });
        res.end(`mock gateway failure: ${String(error)}`);
      });
    };
    const server = options.tls
      ? createHttpsServer({ key: options.tls.key, cert: options.tls.cert }, listener)
      : createServer(listener);
    server.once('error', reject);
    server.listen(options.port ?? 0, '127.0.0.1', () => {
      const { port } = server.address() as AddressInfo; // listening on a TCP port: an AddressInfo, not a pipe name
      origin = `${options.tls ? 'https' : 'http'}://127.0.0.1:${port}`;
      resolve({
        origin,
        baseUrl: `${origin}${basePath}`,
        port,
        close: () =>
          new Promise<void>((done, fail) => {
            server.close((error) => (error ? fail(error) : done()));
            server.closeAllConnections();
          }),
      });
    });
  });
}
