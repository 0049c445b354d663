/**
 * A real redis-server for tests: started on a free port, stopped after. Both clients
 * the Redis stores accept (ioredis and node-redis) can be built against it. A Cluster and a
 * Sentinel set are in `redis-topologies.ts`.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { Redis } from 'ioredis';
import { createClient } from 'redis';
import type { RedisClientLike } from '../../src/redis/index.js';
import { driveClient } from '../../src/redis/topology.js';

/** Whether `redis-server` is on the PATH (.ci/run installs it). */
export function hasRedisServer(): boolean {
  return spawnSync('redis-server', ['--version'], { stdio: 'ignore' }).status === 0;
}

/**
 * Where this process looks for ports: test files run three at a time (vitest.config.ts), so each
 * vitest worker (`VITEST_POOL_ID`) takes a range of its own in 10000–19999, below Linux's
 * ephemeral ports (32768 and up), and with a Redis Cluster's bus ports (the port + 10000) in
 * 20000–29999, outside every worker's range. Neither a file running beside this one nor an
 * outgoing connection can then take a port between the check below and the server's bind. Each
 * file starts at its own place in the range (by pid): the files one worker runs in turn do not
 * meet the ports of the one before. Outside vitest (a bench), the system picks.
 */
const PORTS_PER_WORKER = 2500;
const POOL_ID = Number(process.env.VITEST_POOL_ID);
const portBase = Number.isInteger(POOL_ID) && POOL_ID > 0 ? 10_000 + ((POOL_ID - 1) % 4) * PORTS_PER_WORKER : 0;
let portOffset = process.pid % PORTS_PER_WORKER;

function listenable(port: number): Promise<number | undefined> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once('error', () => resolve(undefined));
    server.listen(port, '127.0.0.1', () => {
      const { port: bound } = server.address() as { port: number };
      server.close(() => resolve(bound));
    });
  });
}

/** A port free on 127.0.0.1 now, from this worker's range (see `portBase`). */
export async function freePort(): Promise<number> {
  if (portBase === 0) {
    const port = await listenable(0);
    if (port === undefined) throw new Error('no free port on 127.0.0.1');
    return port;
  }
  for (let tries = 0; tries < PORTS_PER_WORKER; tries++) {
    const port = await listenable(portBase + (portOffset++ % PORTS_PER_WORKER));
    if (port !== undefined) return port;
  }
  throw new Error(`no free port in ${portBase}–${portBase + PORTS_PER_WORKER - 1}`);
}

/** One redis-server process; `stop()` and `start()` again keep the same port (a Redis outage). */
export class RedisServer {
  #child: ChildProcess | undefined;
  private constructor(
    readonly port: number,
    readonly durable: boolean,
  ) {}

  /**
   * `durable` (the default) configures RDB snapshots (never taken within a test: the first is due
   * after an hour, and a stop is a SIGKILL), so the stores see persistence and do not warn;
   * `durable: false` turns it off, as the warning's own test needs.
   */
  static async start({ durable = true }: { durable?: boolean } = {}): Promise<RedisServer> {
    if (!hasRedisServer())
      throw new Error('redis-server is not installed: apt-get install -y redis-server (.ci/run does it)');
    const server = new RedisServer(await freePort(), durable);
    await server.start();
    return server;
  }

  get url(): string {
    return `redis://127.0.0.1:${this.port}`;
  }

  async start(): Promise<void> {
    const child = spawn(
      'redis-server',
      [
        '--port',
        String(this.port),
        '--bind',
        '127.0.0.1',
        '--dir',
        tmpdir(),
        '--dbfilename',
        `myr-redis-test-${this.port}.rdb`,
        '--save',
        this.durable ? '3600 1' : '',
        '--appendonly',
        'no',
      ],
      {
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    this.#child = child;
    let output = '';
    child.stdout?.on('data', (chunk: Buffer) => (output += chunk.toString()));
    // redis-server prints this line once it accepts connections.
    await new Promise<void>((resolve, reject) => {
      const onData = () => {
        if (output.includes('Ready to accept connections')) {
          child.stdout?.off('data', onData);
          resolve();
        }
      };
      child.stdout?.on('data', onData);
      child.once('exit', (code) => reject(new Error(`redis-server exited with ${code}: ${output.slice(-500)}`)));
    });
  }

  async stop(): Promise<void> {
    const child = this.#child;
    this.#child = undefined;
    if (!child || child.exitCode !== null) return;
    await new Promise<void>((resolve) => {
      child.once('exit', () => resolve());
      child.kill('SIGKILL');
    });
  }
}

export type ClientKind = 'ioredis' | 'node-redis';
export const CLIENT_KINDS: ClientKind[] = ['ioredis', 'node-redis'];

/** A connected client of `kind`, and how to close it. */
export async function connect(
  kind: ClientKind,
  url: string,
): Promise<{ client: RedisClientLike; close: () => Promise<void> }> {
  if (kind === 'ioredis') {
    const client = new Redis(url, { lazyConnect: true, retryStrategy: () => 50 });
    client.on('error', () => undefined); // reconnects are expected while a test stops Redis
    await client.connect();
    return { client, close: async () => void client.disconnect() };
  }
  const client = createClient({ url, socket: { reconnectStrategy: () => 50 } });
  client.on('error', () => undefined); // reconnects are expected while a test stops Redis
  await client.connect();
  return { client, close: async () => void client.destroy() };
}

/** Sends one raw command through any supported client, routed by its key (for test set-up and inspection). */
export function rawCommand(client: RedisClientLike, args: string[]): Promise<unknown> {
  return Promise.resolve(driveClient(client, 'rawCommand').send(args));
}

/** Runs `body` with a `kind` client that was connected to a Redis which has since stopped. */
export async function whileRedisDown(
  kind: ClientKind,
  body: (client: RedisClientLike) => Promise<void>,
): Promise<void> {
  const outage = await RedisServer.start();
  const conn = await connect(kind, outage.url);
  await outage.stop();
  try {
    await body(conn.client);
  } finally {
    await conn.close();
  }
}
