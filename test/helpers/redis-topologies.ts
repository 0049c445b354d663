/**
 * Real Redis topologies for tests: a 3-master Redis Cluster and a Sentinel-managed master
 * with one replica, each on free ports, started by the test and stopped after. A
 * {@link RedisTarget} says how to reach one; `connectTarget` builds either client against it.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Cluster, Redis } from 'ioredis';
import { createCluster, createSentinel } from 'redis';
import type { RedisClientLike } from '../../src/redis/index.js';
import type { ClientKind } from './redis.js';
import { connect, freePort, hasRedisServer } from './redis.js';

/** How a test reaches Redis: one server, a cluster (any of its nodes), or a Sentinel set. */
export type RedisTarget =
  | { topology: 'single'; url: string }
  | { topology: 'cluster'; ports: number[] }
  | { topology: 'sentinel'; sentinelPorts: number[]; name: string };

const HOST = '127.0.0.1';

/** One redis-server (or sentinel) process, waited for until it accepts connections. */
async function spawnRedis(args: string[]): Promise<ChildProcess> {
  if (!hasRedisServer())
    throw new Error('redis-server is not installed: apt-get install -y redis-server (.ci/run does it)');
  const child = spawn('redis-server', args, { stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  await new Promise<void>((resolve, reject) => {
    const onData = () => {
      // A server prints the first line when it accepts connections, a sentinel the second.
      if (output.includes('Ready to accept connections') || output.includes('+monitor master')) {
        child.stdout?.off('data', onData);
        resolve();
      }
    };
    child.stdout?.on('data', onData);
    child.once('exit', (code) => reject(new Error(`redis-server exited with ${code}: ${output.slice(-500)}`)));
  });
  return child;
}

function kill(child: ChildProcess | undefined): Promise<void> {
  if (!child || child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    child.once('exit', () => resolve());
    child.kill('SIGKILL');
  });
}

function cli(port: number, ...args: string[]): string {
  const run = spawnSync('redis-cli', ['-h', HOST, '-p', String(port), ...args], { encoding: 'utf8', timeout: 30_000 });
  if (run.status !== 0) throw new Error(`redis-cli ${args.join(' ')}: ${run.stderr || run.stdout}`);
  return run.stdout;
}

async function until(what: string, ok: () => boolean, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!ok()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** A 3-master Redis Cluster without replicas, in a temporary directory. */
export class RedisClusterServers {
  readonly #children: ChildProcess[] = [];
  private constructor(
    readonly ports: number[],
    readonly dir: string,
  ) {}

  static async start(masters = 3): Promise<RedisClusterServers> {
    const ports: number[] = [];
    while (ports.length < masters) {
      const port = await freePort();
      // A cluster node also listens on port + 10000 (the bus): keep both free and distinct.
      if (port < 55_000 && !ports.includes(port)) ports.push(port);
    }
    const cluster = new RedisClusterServers(ports, mkdtempSync(join(tmpdir(), 'myr-redis-cluster-')));
    try {
      for (const port of ports) {
        const conf = join(cluster.dir, `nodes-${port}.conf`);
        cluster.#children.push(
          await spawnRedis([
            '--port',
            String(port),
            '--bind',
            HOST,
            '--save',
            '3600 1',
            '--appendonly',
            'no',
            '--dir',
            cluster.dir,
            '--cluster-enabled',
            'yes',
            '--cluster-config-file',
            conf,
          ]),
        );
      }
      cli(
        ports[0]!,
        '--cluster',
        'create',
        ...ports.map((p) => `${HOST}:${p}`),
        '--cluster-replicas',
        '0',
        '--cluster-yes',
      );
      await until('cluster_state:ok', () => ports.every((p) => cli(p, 'CLUSTER', 'INFO').includes('cluster_state:ok')));
    } catch (error) {
      await cluster.stop();
      throw error;
    }
    return cluster;
  }

  get target(): RedisTarget {
    return { topology: 'cluster', ports: this.ports };
  }

  async stop(): Promise<void> {
    await Promise.all(this.#children.map(kill));
    rmSync(this.dir, { recursive: true, force: true });
  }
}

/** A master, one replica and one sentinel that fails over to the replica 1 s after the master dies. */
export class RedisSentinelServers {
  static readonly NAME = 'myr-master';
  master: ChildProcess | undefined;
  readonly #others: ChildProcess[] = [];
  private constructor(
    readonly masterPort: number,
    readonly replicaPort: number,
    readonly sentinelPort: number,
    readonly dir: string,
  ) {}

  static async start(): Promise<RedisSentinelServers> {
    const set = new RedisSentinelServers(
      await freePort(),
      await freePort(),
      await freePort(),
      mkdtempSync(join(tmpdir(), 'myr-redis-sentinel-')),
    );
    // RDB configured (never due within a test) so the stores see persistence and do not warn.
    const common = ['--bind', HOST, '--save', '3600 1', '--appendonly', 'no', '--dir', set.dir];
    try {
      set.master = await spawnRedis(['--port', String(set.masterPort), ...common]);
      set.#others.push(
        await spawnRedis(['--port', String(set.replicaPort), ...common, '--replicaof', HOST, String(set.masterPort)]),
      );
      await until('the replica in sync', () =>
        cli(set.replicaPort, 'INFO', 'replication').includes('master_link_status:up'),
      );
      const conf = join(set.dir, 'sentinel.conf');
      writeFileSync(
        conf,
        [
          `port ${set.sentinelPort}`,
          `bind ${HOST}`,
          `dir ${set.dir}`,
          `sentinel monitor ${RedisSentinelServers.NAME} ${HOST} ${set.masterPort} 1`,
          `sentinel down-after-milliseconds ${RedisSentinelServers.NAME} 1000`,
          `sentinel failover-timeout ${RedisSentinelServers.NAME} 5000`,
          '',
        ].join('\n'),
      );
      set.#others.push(await spawnRedis([conf, '--sentinel']));
    } catch (error) {
      await set.stop();
      throw error;
    }
    return set;
  }

  get target(): RedisTarget {
    return { topology: 'sentinel', sentinelPorts: [this.sentinelPort], name: RedisSentinelServers.NAME };
  }

  /** Kills the master; resolves once the sentinel has promoted the replica. */
  async killMaster(): Promise<void> {
    await kill(this.master);
    await until('the sentinel to promote the replica', () =>
      cli(this.sentinelPort, 'SENTINEL', 'get-master-addr-by-name', RedisSentinelServers.NAME).includes(
        String(this.replicaPort),
      ),
    );
    await until('the replica to act as master', () =>
      cli(this.replicaPort, 'INFO', 'replication').includes('role:master'),
    );
  }

  async stop(): Promise<void> {
    await Promise.all([kill(this.master), ...this.#others.map(kill)]);
    rmSync(this.dir, { recursive: true, force: true });
  }
}

/** A connected client of `kind` for any target, and how to close it. */
export async function connectTarget(
  kind: ClientKind,
  target: RedisTarget,
): Promise<{ client: RedisClientLike; close: () => Promise<void> }> {
  if (target.topology === 'single') return connect(kind, target.url);
  const nodes = target.topology === 'cluster' ? target.ports : target.sentinelPorts;
  if (kind === 'ioredis') {
    const client =
      target.topology === 'cluster'
        ? new Cluster(
            nodes.map((port) => ({ host: HOST, port })),
            { lazyConnect: true, clusterRetryStrategy: () => 50 },
          )
        : new Redis({
            sentinels: nodes.map((port) => ({ host: HOST, port })),
            name: target.name,
            lazyConnect: true,
            retryStrategy: () => 50,
            sentinelRetryStrategy: () => 50,
          });
    client.on('error', () => undefined); // reconnects are expected while a test kills a server
    await client.connect();
    return { client, close: async () => void client.disconnect() };
  }
  if (target.topology === 'cluster') {
    const client = createCluster({
      rootNodes: nodes.map((port) => ({ url: `redis://${HOST}:${port}` })),
      defaults: { socket: { reconnectStrategy: () => 50 } },
    });
    client.on('error', () => undefined);
    await client.connect();
    return { client, close: async () => void client.destroy() };
  }
  const client = createSentinel({
    name: target.name,
    sentinelRootNodes: nodes.map((port) => ({ host: HOST, port })),
    nodeClientOptions: { socket: { reconnectStrategy: () => 50 } },
  });
  client.on('error', () => undefined);
  await client.connect();
  return { client, close: async () => void client.destroy() };
}

/** The target a fleet worker was started with: `REDIS_TARGET` (JSON), or `REDIS_URL` for one server. */
export function targetFromEnv(): RedisTarget {
  const json = process.env['REDIS_TARGET'];
  if (json !== undefined) return JSON.parse(json) as RedisTarget;
  const url = process.env['REDIS_URL'];
  if (url === undefined) throw new Error('worker started without REDIS_TARGET or REDIS_URL');
  return { topology: 'single', url };
}
