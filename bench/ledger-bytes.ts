/**
 * What the SQL ledger keeps per handled payment, in bytes on disk (table and indexes), on each
 * database: after N payments handled (SUCCESS, and every tenth REFUNDED too), while each
 * callback's own record lives (24 h), and after those records expired and `prune` took them,
 * when one row per payment is what is kept for good. Each table is compacted before it is
 * measured (VACUUM FULL, OPTIMIZE TABLE, VACUUM), so the figure is the rows' size, not free space.
 *
 * Run: `npx tsx bench/ledger-bytes.ts` (or `npm run bench`). Tune: BENCH_LEDGER_PAYMENTS.
 *
 * @module
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import mysql from 'mysql2/promise';
import pg from 'pg';
import { SqlLedger, fromMysql2, fromPg, fromSqlite, type SqlClient } from '../src/sql/index.js';
import { canSupersede, lifecycleRank } from '../src/webhooks/lifecycle.js';
import { hasMariadb, MariadbServer } from '../test/helpers/mariadb.js';
import { hasPostgres, PostgresServer } from '../test/helpers/postgres.js';
import { envInt, table } from './harness.js';

const DAY = 86_400_000;

export interface LedgerBytesRow {
  database: string;
  payments: number;
  /** Bytes per payment while each callback's record lives (before prune). */
  perPaymentLive: number;
  /** Bytes per payment kept for good (after the callbacks' records expired and were pruned). */
  perPaymentKept: number;
}

/** Handles `payments` payments (SUCCESS, every tenth also REFUNDED) through `ledger`. */
async function handle<Tx>(ledger: SqlLedger<Tx>, payments: number): Promise<void> {
  const run = (payment: string, status: string) =>
    ledger.run(`payment:${payment}:${status}`, () => undefined, {
      raiseMark: canSupersede(status),
      completedTtlMs: DAY,
      order: { paymentId: payment, rank: lifecycleRank(status) },
    });
  for (let start = 0; start < payments; start += 64) {
    await Promise.all(
      Array.from({ length: Math.min(64, payments - start) }, async (_, offset) => {
        const payment = `PAY_${String(start + offset).padStart(10, '0')}`;
        await run(payment, 'SUCCESS');
        if ((start + offset) % 10 === 0) await run(payment, 'REFUNDED');
      }),
    );
  }
}

/** Measures one database: `size()` compacts and answers the table's bytes. */
async function measure<Tx>(
  database: string,
  client: SqlClient<Tx>,
  payments: number,
  size: (table: string) => Promise<number>,
): Promise<LedgerBytesRow> {
  const ledger = new SqlLedger(client, { table: 'bytes_ledger' });
  await ledger.ensureSchema();
  const empty = await size('bytes_ledger');
  await handle(ledger, payments);
  const live = await size('bytes_ledger');
  const realNow = Date.now;
  Date.now = () => realNow() + DAY + 3_600_000;
  try {
    await ledger.prune();
  } finally {
    Date.now = realNow;
  }
  const kept = await size('bytes_ledger');
  return {
    database,
    payments,
    perPaymentLive: Math.round((live - empty) / payments),
    perPaymentKept: Math.round((kept - empty) / payments),
  };
}

export async function runLedgerBytesBench(): Promise<LedgerBytesRow[]> {
  const payments = envInt('BENCH_LEDGER_PAYMENTS', 20_000);
  const rows: LedgerBytesRow[] = [];
  if (hasPostgres()) {
    const server = await PostgresServer.start();
    const pool = new pg.Pool({ connectionString: server.url, max: 16 });
    try {
      rows.push(
        await measure('PostgreSQL 15', fromPg(pool), payments, async (name) => {
          await pool.query(`VACUUM FULL ${name}`);
          return Number(
            (await pool.query<{ bytes: string }>('SELECT pg_total_relation_size($1) AS bytes', [name])).rows[0]?.bytes,
          );
        }),
      );
    } finally {
      await pool.end();
      await server.destroy();
    }
  } else console.log('PostgreSQL not installed: skipped');
  if (hasMariadb()) {
    const server = await MariadbServer.start();
    const pool = mysql.createPool({ ...server.options, connectionLimit: 16 });
    try {
      rows.push(
        await measure('MariaDB 10.11 (InnoDB)', fromMysql2(pool), payments, async (name) => {
          await pool.query(`OPTIMIZE TABLE ${name}`);
          await pool.query(`ANALYZE TABLE ${name}`);
          const [found] = await pool.query<mysql.RowDataPacket[]>(
            'SELECT DATA_LENGTH + INDEX_LENGTH AS bytes FROM information_schema.TABLES WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = ?',
            [name],
          );
          return Number(found[0]?.bytes);
        }),
      );
    } finally {
      await pool.end();
      await server.destroy();
    }
  } else console.log('MariaDB not installed: skipped');
  const dir = mkdtempSync(join(tmpdir(), 'myr-bytes-'));
  try {
    const file = join(dir, 'shop.db');
    const reader = new DatabaseSync(file);
    rows.push(
      await measure('SQLite (node:sqlite)', fromSqlite(file), payments, async () => {
        reader.exec('VACUUM');
        const pages = reader
          .prepare('SELECT page_count * page_size AS bytes FROM pragma_page_count(), pragma_page_size()')
          .get();
        return Number(pages?.bytes);
      }),
    );
    reader.close();
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  console.log(
    table(
      [
        'database',
        'payments',
        "bytes per payment, callbacks' records live (24 h)",
        'bytes per payment kept for good (after prune)',
      ],
      rows.map((row) => [row.database, String(row.payments), String(row.perPaymentLive), String(row.perPaymentKept)]),
    ),
  );
  return rows;
}

if (import.meta.url === `file://${process.argv[1]}`) await runLedgerBytesBench();
