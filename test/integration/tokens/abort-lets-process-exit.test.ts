/**
 * After an aborted call, nothing the SDK started keeps the process alive: a child Node
 * process aborts a call whose token request hangs on a real server on 127.0.0.1, and must
 * then exit on its own (no detached token fetch, no pending timer).
 */
import { spawn } from 'node:child_process';
import { createServer, type Server } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, expect, it } from 'vitest';

const root = fileURLToPath(new URL('../../..', import.meta.url));
const received: string[] = [];
const sockets = new Set<Socket>();
let server: Server;
let baseUrl: string;
/** What the server does once the token request has arrived (tells the child to abort). */
let onTokenRequest = (): void => undefined;

beforeAll(async () => {
  server = createServer((req) => {
    received.push(`${req.method} ${req.url}`); // never answers: the token request hangs
    onTokenRequest();
  });
  server.on('connection', (socket) => sockets.add(socket));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/api/v1`;
});
afterAll(async () => {
  for (const socket of sockets) socket.destroy();
  await new Promise<void>((resolve) => server.close(() => resolve()));
});

const child = `
import { MyrGateway } from ${JSON.stringify(`${root}src/index.ts`)};
const gateway = new MyrGateway({ baseUrl: process.env.BASE_URL, merchantId: 'M_EXIT', apiKey: 'sk_exit', allowInsecureLoopback: true });
const controller = new AbortController();
// Aborted once the token request is on the server, however slow the machine (a signal listener keeps nothing alive).
process.once('SIGUSR2', () => controller.abort());
try {
  await gateway.payments.retrieve('ORDER1', { signal: controller.signal });
  console.log('RESOLVED');
} catch (error) {
  console.log(error.code);
}
`;

it('a process whose only call was aborted during a hanging token fetch exits on its own', async () => {
  const proc = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', child], {
    cwd: root,
    env: { ...process.env, BASE_URL: baseUrl },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  onTokenRequest = () => proc.kill('SIGUSR2');
  let stdout = '';
  let stderr = '';
  proc.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  proc.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  // Generous for a loaded machine; the SDK's own timers (30 s per attempt) are far longer.
  const exited = await new Promise<number | null | 'still running'>((resolve) => {
    const guard = setTimeout(() => {
      proc.kill('SIGKILL');
      resolve('still running');
    }, 15_000);
    proc.on('exit', (code) => {
      clearTimeout(guard);
      resolve(code);
    });
  });
  expect(stderr).toBe('');
  expect(exited).toBe(0);
  expect(stdout.trim()).toBe('ABORTED');
  expect(received).toEqual(['POST /api/v1/auth/token']);
}, 20_000);
