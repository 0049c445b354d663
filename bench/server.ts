/**
 * The benchmark's HTTP server: plain node:http on 127.0.0.1, port 0, answering
 * `POST /api/v1/auth/token` and `POST /api/v1/payment/request` with fixed, valid bodies
 * and X-RateLimit-* headers. It runs in a child process so that its CPU is not counted
 * in the client's `process.cpuUsage()`.
 *
 * - `startBenchServer()` forks this file (with the tsx loader) and resolves with its port.
 * - Run as a child (MYR_BENCH_SERVER=1), it listens and reports its port over IPC.
 *
 * @module
 */
import { fork } from 'node:child_process';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';

export const BENCH_TOKEN = 'bench-access-token-0123456789abcdef';

/** A running server child. */
export interface BenchServer {
  /** e.g. http://127.0.0.1:40123/api/v1 (no trailing slash). */
  baseUrl: string;
  port: number;
  /** Requests the server answered, by path (asks the child). */
  stats(): Promise<Record<string, number>>;
  close(): Promise<void>;
}

function serve(): void {
  const counts: Record<string, number> = {};
  const tokenBody = JSON.stringify({
    status: 'success',
    data: { access_token: BENCH_TOKEN, token_type: 'Bearer', expires_in: 3600 },
  });
  let seq = 0;
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const path = req.url ?? '';
      counts[path] = (counts[path] ?? 0) + 1;
      const headers = {
        'content-type': 'application/json',
        'x-ratelimit-limit': '100000',
        'x-ratelimit-remaining': '99999',
        'x-ratelimit-reset': String(Math.floor(Date.now() / 1000) + 60),
      };
      if (req.method === 'POST' && path === '/api/v1/auth/token') {
        res.writeHead(200, headers).end(tokenBody);
        return;
      }
      if (req.method === 'POST' && path === '/api/v1/payment/request') {
        if (req.headers.authorization !== `Bearer ${BENCH_TOKEN}`) {
          res
            .writeHead(401, headers)
            .end(JSON.stringify({ status: 'error', error: { code: 'UNAUTHORIZED', message: 'bad token' } }));
          return;
        }
        let referenceId = 'UNKNOWN';
        try {
          const parsed = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { reference_id?: unknown };
          if (typeof parsed.reference_id === 'string') referenceId = parsed.reference_id;
        } catch {
          // answer anyway; the bench checks the status code only
        }
        seq += 1;
        const paymentId = `PAY_${seq.toString(36).toUpperCase().padStart(12, '0')}`;
        res.writeHead(200, headers).end(
          JSON.stringify({
            status: 'success',
            data: {
              payment_id: paymentId,
              payment_url: `https://pay.gateway.example/p/${paymentId}`,
              status: 'PROCESSING',
              amount: 49.9,
              currency: 'MYR',
              reference_id: referenceId,
              expires_in: 900,
              expires_at: '2030-01-01T00:15:00.000Z',
              gateway: {
                behavior: 'REDIRECT_EXTERNAL',
                redirect_url: `https://bank.gateway.example/authorize/${paymentId}`,
                qr_data_string: null,
              },
            },
          }),
        );
        return;
      }
      res.writeHead(404, headers).end(JSON.stringify({ status: 'error', error: { code: 'NOT_FOUND', message: path } }));
    });
  });
  server.keepAliveTimeout = 60_000;
  server.listen(0, '127.0.0.1', () => {
    const { port } = server.address() as AddressInfo;
    process.send?.({ type: 'listening', port });
  });
  process.on('message', (message: { type?: string }) => {
    if (message.type === 'stats') process.send?.({ type: 'stats', counts });
    if (message.type === 'close') server.close(() => process.exit(0));
  });
  process.on('disconnect', () => process.exit(0));
}

/** Forks the server into a child process and waits until it listens. */
export async function startBenchServer(): Promise<BenchServer> {
  const child = fork(fileURLToPath(import.meta.url), [], {
    execArgv: ['--import', import.meta.resolve('tsx')],
    env: { ...process.env, MYR_BENCH_SERVER: '1' },
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  const port = await new Promise<number>((resolve, reject) => {
    child.once('error', reject);
    child.once('exit', (code) => reject(new Error(`bench server exited early (code ${code})`)));
    child.on('message', (message: { type?: string; port?: number }) => {
      if (message.type === 'listening' && typeof message.port === 'number') resolve(message.port);
    });
  });
  child.removeAllListeners('exit');
  return {
    port,
    baseUrl: `http://127.0.0.1:${port}/api/v1`,
    stats: () =>
      new Promise((resolve) => {
        const onMessage = (message: { type?: string; counts?: Record<string, number> }) => {
          if (message.type !== 'stats') return;
          child.off('message', onMessage);
          resolve(message.counts ?? {});
        };
        child.on('message', onMessage);
        child.send({ type: 'stats' });
      }),
    close: () =>
      new Promise<void>((resolve) => {
        if (child.exitCode !== null) return resolve();
        child.once('exit', () => resolve());
        child.send({ type: 'close' });
        // keep-alive sockets held by the client can delay server.close(); do not wait on them
        setTimeout(() => child.kill(), 1000).unref();
      }),
  };
}

if (process.env.MYR_BENCH_SERVER === '1' && process.send) serve();
