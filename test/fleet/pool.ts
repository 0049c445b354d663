/**
 * Worker processes for the fleet tests: each runs a script under tsx and answers
 * `{ id, ...message }` requests over IPC with `{ id, result }` or `{ id, error }`.
 */
import { fork, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { MyrGateway, type MyrGatewayOptions } from '../../src/index.js';

export interface Worker {
  request<T>(message: Record<string, unknown>): Promise<T>;
}

export class WorkerPool {
  readonly workers: Worker[] = [];
  readonly #children: ChildProcess[] = [];

  static async start(
    script: string,
    count: number,
    env: (index: number) => Record<string, string>,
  ): Promise<WorkerPool> {
    const pool = new WorkerPool();
    const file = fileURLToPath(new URL(script, import.meta.url));
    const ready: Promise<void>[] = [];
    for (let i = 0; i < count; i++) {
      const child = fork(file, [], {
        execArgv: ['--import', import.meta.resolve('tsx')],
        env: { ...process.env, ...env(i) },
        stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
      });
      pool.#children.push(child);
      let next = 0;
      const pending = new Map<number, { resolve: (v: unknown) => void; reject: (e: Error) => void }>();
      let started!: () => void;
      let died!: (e: Error) => void;
      ready.push(new Promise<void>((resolve, reject) => ((started = resolve), (died = reject))));
      child.on('message', (raw) => {
        const reply = raw as { id: number; result?: unknown; error?: string; ready?: boolean };
        if (reply.ready) return started();
        const waiter = pending.get(reply.id);
        pending.delete(reply.id);
        if (reply.error !== undefined) waiter?.reject(new Error(reply.error));
        else waiter?.resolve(reply.result);
      });
      child.once('exit', (code) => {
        died(new Error(`worker ${i} exited with ${code} before it was ready`));
        for (const waiter of pending.values()) waiter.reject(new Error(`worker ${i} exited with ${code}`));
      });
      const worker: Worker = {
        request: <T>(message: Record<string, unknown>) =>
          new Promise<T>((resolve, reject) => {
            const id = next++;
            pending.set(id, { resolve: resolve as (v: unknown) => void, reject });
            child.send({ id, ...message });
          }),
      };
      pool.workers.push(worker);
    }
    await Promise.all(ready);
    return pool;
  }

  /** Sends `message` to every worker at once and collects the answers. */
  all<T>(message: Record<string, unknown>): Promise<T[]> {
    return Promise.all(this.workers.map((w) => w.request<T>(message)));
  }

  /** Kills worker `index` with SIGKILL (a crash: no cleanup runs) and waits until it is gone. */
  kill(index: number): Promise<void> {
    const child = this.#children[index];
    if (!child || child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
    return new Promise((resolve) => {
      child.once('exit', () => resolve());
      child.kill('SIGKILL');
    });
  }

  async stop(): Promise<void> {
    await Promise.all(
      this.#children.map(
        (child) =>
          new Promise<void>((resolve) => {
            if (child.exitCode !== null || child.signalCode !== null) return resolve();
            child.once('exit', () => resolve());
            child.kill('SIGKILL');
          }),
      ),
    );
  }
}

/** The worker side: answers requests with `handle`'s result. */
export function serveRequests(handle: (message: { type: string } & Record<string, unknown>) => Promise<unknown>): void {
  // Messages sent before a listener exists would be lost: say when this one is listening.
  process.send!({ ready: true });
  process.on('message', (raw) => {
    const { id, ...message } = raw as { id: number; type: string };
    handle(message).then(
      (result) => process.send!({ id, result }),
      (error: unknown) =>
        process.send!({ id, error: error instanceof Error ? `${error.name}: ${error.message}` : String(error) }),
    );
  });
}

/** A variable the pool set for this worker. */
export function workerEnv(name: string): string {
  const value = process.env[name];
  if (value === undefined) throw new Error(`worker started without ${name}`);
  return value;
}

/** How a worker's batch of calls ended: the count that succeeded and the first few errors. */
export async function settle(calls: Promise<unknown>[]): Promise<{ ok: number; errors: string[] }> {
  const settled = await Promise.allSettled(calls);
  const errors = settled.flatMap((s) => (s.status === 'rejected' ? [String((s.reason as Error).message)] : []));
  return { ok: settled.length - errors.length, errors: errors.slice(0, 3) };
}

/** Valid payment params for a worker's burst. */
export function burstPayment(referenceId: string) {
  return {
    amount: 10,
    reference_id: referenceId,
    customer_name: 'Aisyah Rahman',
    customer_phone: '60123456789',
    payment_method: 'QR_PAYMENT',
  } as const;
}

/** The worker's client of the mock merchant the pool named in its environment. */
export function workerGateway(extra: Partial<MyrGatewayOptions>): MyrGateway {
  return new MyrGateway({
    baseUrl: workerEnv('BASE_URL'),
    merchantId: workerEnv('MERCHANT_ID'),
    apiKey: workerEnv('API_KEY'),
    allowInsecureLoopback: true,
    ...extra,
  });
}
