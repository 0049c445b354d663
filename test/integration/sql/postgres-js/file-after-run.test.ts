/**
 * postgres.js's `tx.file(path)` reads the file first and sends its query when the read ends. A
 * run whose time passed meanwhile has rolled back and given its connection back: the query must
 * not go out then, on a connection that is another run's or in autocommit (the gateway retries
 * the callback, so a write sent late would land twice). Real PostgreSQL 15; the read is held by a
 * FIFO the test writes only after the run timed out.
 */
import { execFileSync } from 'node:child_process';
import { closeSync, constants, mkdtempSync, openSync, rmSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import postgres from 'postgres';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { ConfigurationError } from '../../../../src/index.js';
import { SqlLedger, fromPostgresJs } from '../../../../src/sql/index.js';
import { PostgresServer } from '../../../helpers/postgres.js';

let server: PostgresServer;
let sql: postgres.Sql;
let dir: string;

beforeAll(async () => {
  server = await PostgresServer.start();
  sql = postgres(server.url, { max: 2, onnotice: () => undefined });
  await sql`CREATE TABLE fulfilments (order_id TEXT NOT NULL)`;
  dir = mkdtempSync(join(tmpdir(), 'myr-pgjs-file-'));
});
afterAll(async () => {
  await sql?.end({ timeout: 1 });
  await server?.destroy();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

/** Writes `text` to the FIFO's reader, if one has it open (a read tx.file began); no reader: nothing. */
function feed(fifo: string, text: string): void {
  let fd: number;
  try {
    fd = openSync(fifo, constants.O_WRONLY | constants.O_NONBLOCK);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENXIO') return;
    throw error;
  }
  writeSync(fd, text);
  closeSync(fd);
}

it('tx.file is refused (its query would leave after the read, past the run): nothing of a timed-out run lands', async () => {
  const ledger = new SqlLedger(fromPostgresJs(sql));
  await ledger.ensureSchema();
  const fifo = join(dir, 'fulfil.sql');
  execFileSync('mkfifo', [fifo]);
  let failed: unknown;
  await ledger.run(
    'payment:PAY_FILE_1:SUCCESS',
    async (tx) => {
      await tx.file(fifo).catch((error: unknown) => {
        failed = error;
      });
    },
    { completedTtlMs: 60_000, timeoutMs: 300, raiseMark: false },
  );
  // A read tx.file began ends now, after the run timed out and let go of its connection.
  feed(fifo, "INSERT INTO fulfilments (order_id) VALUES ('A1')");
  await new Promise((resolve) => setTimeout(resolve, 500));
  expect(await sql`SELECT order_id FROM fulfilments`).toHaveLength(0);
  expect(failed).toBeInstanceOf(ConfigurationError);
  expect(String(failed)).toMatch(/tx.file is not available in a ledger run.*tx.unsafe/);
});
