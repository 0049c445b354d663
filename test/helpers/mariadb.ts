/**
 * A real MariaDB 10.11 for tests: a fresh data directory in a temporary directory on a free
 * port, stopped and removed after. `stop()` and `start()` again keep the data and the port.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from './redis.js';

/** Whether mariadbd is installed (.ci/run installs it). */
export function hasMariadb(): boolean {
  return spawnSync('mariadbd', ['--version'], { stdio: 'ignore' }).status === 0;
}

export class MariadbServer {
  #child: ChildProcess | undefined;
  private constructor(
    readonly port: number,
    readonly dir: string,
    readonly durable: boolean,
    /** More server options (say `--log-bin`). */
    readonly args: readonly string[] = [],
  ) {}

  /** `durable: false` (the default) does not flush the log at each commit: tests need no crash safety of the server. */
  static async start({
    durable = false,
    args = [],
  }: { durable?: boolean; args?: readonly string[] } = {}): Promise<MariadbServer> {
    if (!hasMariadb()) throw new Error('MariaDB is not installed: apt-get install -y mariadb-server (.ci/run does it)');
    const dir = mkdtempSync(join(tmpdir(), 'myr-mariadb-'));
    // A temporary directory of its own: bootstraps running at once (test files run three at a
    // time) otherwise meet each other's temporary tables in /tmp ("Unknown table
    // 'mysql.tmp_user_sys'", 3 of 12 in four rounds of four).
    mkdirSync(join(dir, 'tmp'));
    const user = process.getuid?.() === 0 ? ['--user=root'] : [];
    const init = spawnSync(
      'mariadb-install-db',
      [
        '--no-defaults',
        `--datadir=${join(dir, 'data')}`,
        '--auth-root-authentication-method=normal',
        '--skip-test-db',
        `--tmpdir=${join(dir, 'tmp')}`,
        ...user,
      ],
      { encoding: 'utf8' },
    );
    if (init.status !== 0) throw new Error(`mariadb-install-db failed: ${init.stderr}${init.stdout}`);
    const server = new MariadbServer(await freePort(), dir, durable, args);
    await server.start();
    return server;
  }

  get url(): string {
    return `mysql://root@127.0.0.1:${this.port}/mysql`;
  }

  /** mysql2 connection options for the `test` database (created at the first start). */
  get options(): { host: string; port: number; user: string; database: string } {
    return { host: '127.0.0.1', port: this.port, user: 'root', database: 'ledger_test' };
  }

  async start(): Promise<void> {
    const user = process.getuid?.() === 0 ? ['--user=root'] : [];
    const child = spawn(
      'mariadbd',
      [
        '--no-defaults',
        `--datadir=${join(this.dir, 'data')}`,
        `--socket=${join(this.dir, 'mysqld.sock')}`,
        `--port=${this.port}`,
        '--bind-address=127.0.0.1',
        `--pid-file=${join(this.dir, 'mysqld.pid')}`,
        `--tmpdir=${join(this.dir, 'tmp')}`,
        '--skip-name-resolve',
        '--max-connections=300',
        `--innodb-flush-log-at-trx-commit=${this.durable ? 1 : 2}`,
        ...this.args,
        ...user,
      ],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
    this.#child = child;
    let output = '';
    await new Promise<void>((resolve, reject) => {
      const onData = (chunk: Buffer) => {
        output += chunk.toString();
        if (output.includes('ready for connections')) {
          child.stderr?.off('data', onData);
          resolve();
        }
      };
      child.stderr?.on('data', onData);
      child.once('exit', (code) => reject(new Error(`mariadbd exited with ${code}: ${output.slice(-800)}`)));
    });
    child.stderr?.resume();
    spawnSync('mariadb', [
      '--no-defaults',
      `--socket=${join(this.dir, 'mysqld.sock')}`,
      '-uroot',
      '-e',
      'CREATE DATABASE IF NOT EXISTS ledger_test',
    ]);
  }

  /** Stops the server at once (SIGKILL), as a crash of the database would. */
  async stop(): Promise<void> {
    const child = this.#child;
    this.#child = undefined;
    if (!child || child.exitCode !== null) return;
    await new Promise<void>((resolve) => {
      child.once('exit', () => resolve());
      child.kill('SIGKILL');
    });
  }

  /** Stops the server and removes its data. */
  async destroy(): Promise<void> {
    await this.stop();
    rmSync(this.dir, { recursive: true, force: true });
  }
}
