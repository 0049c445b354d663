/**
 * postgres.js and the connection a run holds, when the work fails or the server closes it: the
 * connection goes back clean (never left inside the transaction), and the work's `tx` never
 * writes outside the run's own transaction (postgres.js reconnects a closed connection object for
 * whoever asks next: a statement sent on it afterwards ran in another run's transaction or in
 * autocommit, and the callback was fulfilled twice). Real PostgreSQL 15, pools of one connection.
 */
import { readFile } from 'node:fs/promises';
import postgres from 'postgres';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { SqlLedger, fromPostgresJs } from '../../../../src/sql/index.js';
import { PostgresServer } from '../../../helpers/postgres.js';

let server: PostgresServer;
let admin: postgres.Sql;

beforeAll(async () => {
  server = await PostgresServer.start();
  admin = postgres(server.url, { max: 2, onnotice: () => undefined });
  await admin`CREATE TABLE orders (k TEXT NOT NULL)`;
});
afterAll(async () => {
  await admin?.end({ timeout: 1 });
  await server?.destroy();
});

const options = { raiseMark: false, completedTtlMs: 86_400_000 };
const orders = async (prefix: string) =>
  (await admin`SELECT k FROM orders WHERE k LIKE ${`${prefix}%`} ORDER BY k`).map((row) => row.k as string);
/** `promise`, or 'hung' after `ms`: a run that never settles fails the test instead of stalling it. */
const within = <T>(promise: Promise<T>, ms: number) =>
  Promise.race([promise, new Promise<'hung'>((resolve) => setTimeout(() => resolve('hung'), ms))]);

it('work that fails with a Node system error (it has a syscall, like any fs or network failure) rolls back and gives the connection back: the retry is handled', async () => {
  const sql = postgres(server.url, { max: 1, onnotice: () => undefined });
  try {
    const ledger = new SqlLedger(fromPostgresJs(sql), { table: 'ledger_syscall', lockTimeoutMs: 300 });
    await ledger.ensureSchema();
    const failed = await ledger.run(
      'SYS_1',
      async (tx) => {
        await tx`INSERT INTO orders (k) VALUES ('SYS_1')`;
        await readFile('/nonexistent/myr-gateway/config.json');
      },
      options,
    );
    expect(failed).toMatchObject({ outcome: 'failed', error: { code: 'ENOENT', syscall: 'open' } });
    // The pool's only connection is back, outside any transaction, and the key is free.
    const retry = await within(
      ledger.run('SYS_1', async (tx) => void (await tx`INSERT INTO orders (k) VALUES ('SYS_1')`), options),
      5000,
    );
    expect(retry).toMatchObject({ outcome: 'processed' });
    expect(await orders('SYS_')).toEqual(['SYS_1']);
  } finally {
    await sql.end({ timeout: 1 });
  }
});

it("a statement the work sends through tx after the server closed its connection is refused: it never lands in the next run's transaction, and the callback is fulfilled once", async () => {
  let closed!: () => void;
  const seen = new Promise<void>((resolve) => (closed = resolve));
  const sql = postgres(server.url, {
    max: 1,
    onnotice: () => undefined,
    onclose: () => closed(),
    connection: { application_name: 'stale_tx' },
  });
  try {
    const ledger = new SqlLedger(fromPostgresJs(sql), { table: 'ledger_stale_tx' });
    await ledger.ensureSchema();
    let resumeA!: () => void;
    const aResumes = new Promise<void>((resolve) => (resumeA = resolve));
    let aStarted!: () => void;
    const aInWork = new Promise<void>((resolve) => (aStarted = resolve));
    const fulfilA = async (tx: postgres.ReservedSql, wait: Promise<void>) => {
      await tx`SELECT 1`;
      aStarted();
      await wait; // busy elsewhere (an HTTP call)
      await tx`INSERT INTO orders (k) VALUES ('STALE_A')`;
    };
    const runA = ledger.run('STALE_A', (tx) => fulfilA(tx, aResumes), options);
    await aInWork;
    await admin`SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = 'stale_tx'`;
    await seen;
    // The pool's one connection object is reconnected for run B, which holds its transaction open.
    let resumeB!: () => void;
    const bResumes = new Promise<void>((resolve) => (resumeB = resolve));
    let bStarted!: () => void;
    const bInWork = new Promise<void>((resolve) => (bStarted = resolve));
    const runB = ledger.run(
      'STALE_B',
      async (tx) => {
        await tx`SELECT 1`;
        bStarted();
        await bResumes;
        await tx`INSERT INTO orders (k) VALUES ('STALE_B')`;
      },
      options,
    );
    await bInWork;
    resumeA();
    expect(await within(runA, 5000)).toMatchObject({ outcome: 'failed', error: { code: 'CONNECTION_CLOSED' } });
    resumeB();
    expect(await within(runB, 5000)).toMatchObject({ outcome: 'processed' });
    expect(await orders('STALE_')).toEqual(['STALE_B']);
    // The gateway's retry of A fulfils it, once.
    expect(
      await within(
        ledger.run('STALE_A', (tx) => fulfilA(tx, Promise.resolve()), options),
        5000,
      ),
    ).toMatchObject({ outcome: 'processed' });
    expect(await orders('STALE_')).toEqual(['STALE_A', 'STALE_B']);
  } finally {
    await sql.end({ timeout: 1 });
  }
});
