/** A real node:http server on 127.0.0.1 for faults msw cannot make (shared by the fault tests). */
import { createServer, type IncomingMessage, type RequestListener, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * An async request handler (the SDK's node handler, Koa's `app.callback()`) as a node:http
 * listener. Node has no use for a listener's promise, so it is let go; a rejection stays
 * unhandled, which fails the vitest run rather than passing silently.
 */
export function asListener(
  handle: (req: IncomingMessage, res: ServerResponse) => void | Promise<void>,
): RequestListener {
  return (req, res) => void handle(req, res);
}

export function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve) => {
    let data = '';
    req.on('data', (chunk: Buffer) => (data += chunk.toString()));
    req.on('end', () => resolve(data));
  });
}

export function json(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}) {
  res.writeHead(status, { 'content-type': 'application/json', ...headers });
  res.end(JSON.stringify(body));
}

/** Starts a server on an ephemeral port of 127.0.0.1; `close` also ends kept-alive and held connections. */
export async function listen(
  handler?: (req: IncomingMessage, res: ServerResponse) => void | Promise<void>,
): Promise<{ server: Server; url: string; close: () => Promise<void> }> {
  // An async handler's promise is let go as asListener says; a rejection stays unhandled, so the run fails.
  const server = createServer(handler && ((req, res) => void handler(req, res)));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const close = () =>
    new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    });
  return { server, url, close };
}

/** A port on 127.0.0.1 nothing listens on (connection refused: nothing was sent). */
export async function closedPortUrl(): Promise<string> {
  const { url, close } = await listen();
  await close();
  return url;
}

/** The success bodies of the fake service. */
export const service = {
  token: () => ({
    status: 'success',
    data: { access_token: 'real-http-token', token_type: 'Bearer', expires_in: 3600 },
  }),
  payment: (id: string, reference: string, amount: number) => ({
    status: 'success',
    data: {
      payment_id: id,
      payment_url: `https://pay.example/${id}`,
      status: 'PROCESSING',
      amount,
      currency: 'MYR',
      reference_id: reference,
      expires_in: 900,
      expires_at: '2030-01-01T00:15:00.000Z',
      gateway: { behavior: 'REDIRECT_EXTERNAL', redirect_url: `https://bank.example/${id}`, qr_data_string: null },
    },
  }),
  withdrawal: (id: string, reference: string, amount: number) => ({
    status: 'success',
    data: { payment_id: id, reference_id: reference, amount, status: 'PROCESSING' },
  }),
  status: (id: string, reference: string, amount: number) => ({
    status: 'success',
    data: {
      payment_id: id,
      reference_id: reference,
      amount,
      currency: 'MYR',
      status: 'PROCESSING',
      gateway_reference: null,
      created_at: '2030-01-01T00:00:00.000Z',
      completed_at: null,
      expires_at: '2030-01-01T00:15:00.000Z',
    },
  }),
};
