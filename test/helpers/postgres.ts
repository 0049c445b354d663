/**
 * A real PostgreSQL 15 for tests: a fresh cluster in a temporary directory on a free port, run
 * as the `postgres` user (Postgres refuses root), stopped and removed after. `stop()` and
 * `start()` again keep the data and the port (a database outage).
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { chownSync, existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from './redis.js';

const BIN = '/usr/lib/postgresql/15/bin';

/** Whether the PostgreSQL 15 server binaries are installed (.ci/run installs them). */
export function hasPostgres(): boolean {
  return existsSync(join(BIN, 'postgres'));
}

function asPostgres(command: string, args: string[]): string[] {
  return process.getuid?.() === 0
    ? ['runuser', '-u', 'postgres', '--', join(BIN, command), ...args]
    : [join(BIN, command), ...args];
}

export class PostgresServer {
  #child: ChildProcess | undefined;
  private constructor(
    readonly port: number,
    readonly dir: string,
    readonly settings: readonly string[],
  ) {}

  /** `durable: false` (the default) turns fsync off: tests need no crash safety of the server itself. */
  static async start({ durable = false }: { durable?: boolean } = {}): Promise<PostgresServer> {
    if (!hasPostgres())
      throw new Error(`PostgreSQL 15 is not installed at ${BIN}: apt-get install -y postgresql-15 (.ci/run does it)`);
    const dir = mkdtempSync(join(tmpdir(), 'myr-pg-'));
    if (process.getuid?.() === 0) {
      const { uid, gid } = postgresUser();
      chownSync(dir, uid, gid);
    }
    const [cmd, ...args] = asPostgres('initdb', [
      '-D',
      join(dir, 'data'),
      '-A',
      'trust',
      '-U',
      'postgres',
      '--no-sync',
      '-E',
      'UTF8',
    ]);
    const init = spawnSync(cmd as string, args, { encoding: 'utf8' });
    if (init.status !== 0) throw new Error(`initdb failed: ${init.stderr}`);
    const settings = [
      '-c',
      'max_connections=200',
      ...(durable ? [] : ['-c', 'fsync=off', '-c', 'full_page_writes=off']),
    ];
    const server = new PostgresServer(await freePort(), dir, settings);
    await server.start();
    return server;
  }

  get url(): string {
    return `postgres://postgres@127.0.0.1:${this.port}/postgres`;
  }

  async start(): Promise<void> {
    const [cmd, ...args] = asPostgres('postgres', [
      '-D',
      join(this.dir, 'data'),
      '-p',
      String(this.port),
      '-k',
      this.dir,
      '-c',
      'listen_addresses=127.0.0.1',
      ...this.settings,
    ]);
    const child = spawn(cmd as string, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    this.#child = child;
    let output = '';
    await new Promise<void>((resolve, reject) => {
      // A start that neither becomes ready nor exits fails with what the server printed.
      const timer = setTimeout(
        () => reject(new Error(`postgres did not become ready in 20 s: ${output.slice(-800)}`)),
        20_000,
      );
      child.once('exit', () => clearTimeout(timer));
      const onData = (chunk: Buffer) => {
        output += chunk.toString();
        if (output.includes('database system is ready to accept connections')) {
          clearTimeout(timer);
          child.stderr?.off('data', onData);
          resolve();
        }
      };
      child.stderr?.on('data', onData);
      child.once('exit', (code) => reject(new Error(`postgres exited with ${code}: ${output.slice(-800)}`)));
    });
    child.stderr?.resume();
  }

  /** Stops the server at once (SIGQUIT: immediate shutdown), as a crash of the database would. */
  async stop(): Promise<void> {
    const child = this.#child;
    this.#child = undefined;
    if (!child || child.exitCode !== null) return;
    const pidFile = join(this.dir, 'data', 'postmaster.pid');
    const pid = existsSync(pidFile) ? Number(readFileSync(pidFile, 'utf8').split('\n')[0]) : undefined;
    await new Promise<void>((resolve) => {
      child.once('exit', () => resolve());
      if (pid) process.kill(pid, 'SIGQUIT');
      else child.kill('SIGQUIT');
    });
    // The postmaster is gone once its pid file is (a restart before that is refused).
    for (let i = 0; i < 200 && existsSync(pidFile); i++) await new Promise((resolve) => setTimeout(resolve, 25));
  }

  /** Stops the server and removes its data. */
  async destroy(): Promise<void> {
    await this.stop();
    rmSync(this.dir, { recursive: true, force: true });
  }
}

function postgresUser(): { uid: number; gid: number } {
  const uid = Number(spawnSync('id', ['-u', 'postgres'], { encoding: 'utf8' }).stdout.trim());
  const gid = Number(spawnSync('id', ['-g', 'postgres'], { encoding: 'utf8' }).stdout.trim());
  return { uid, gid };
}
