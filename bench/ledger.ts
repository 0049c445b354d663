/**
 * SQL ledger bench (issue 20): handled callbacks per second through SqlLedger with a no-op
 * handler at 64 in flight, against the floor of the same client doing one insert-if-absent plus
 * COMMIT per callback on the same database, side by side in one run; and the round trips each
 * handled callback costs, counted on the client side. Postgres 15 (node-postgres,
 * postgres.js), MariaDB 10.11 (mysql2) and SQLite (node:sqlite), each server durable (fsync on).
 *
 * Each row also has a second floor, the claim floor: the rows the ledger writes for a SUCCESS
 * callback (kept for good: issue 31 item 1), written by the dialect's own claim statement between
 * BEGIN and COMMIT, in the floor's plain loop. On Postgres that is the payment's row alone (a
 * payment outcome's run claims there); on MySQL and SQLite the callback's row and the payment's.
 * It is what the same writes cost the database and the client with none of the ledger's
 * JavaScript, its lock timeout, or its check before COMMIT. The ledger ÷ the one-row floor says
 * what exactly once for good costs against the cheapest write; ÷ the claim floor, what the ledger
 * adds to its own writes.
 *
 * A second table gives each loop's CPU per callback, on each side of the socket: this process (the
 * client) and the database server (its processes' CPU, read from /proc; none for SQLite, which
 * runs in this process). Where both share the machine's cores, a callback costs their sum: this
 * says whether what the ledger adds is the client's work or the server's.
 *
 * Rows whose server is not installed are skipped with a note.
 *
 * Run: `npx tsx bench/ledger.ts` (or `npm run bench`). Tune: BENCH_LEDGER_OPS, BENCH_ROUNDS.
 * BENCH_LEDGER_ONLY runs only the rows named, comma-separated, of `node-postgres`, `postgres.js`,
 * `mariadb` and `sqlite` (e.g. `BENCH_LEDGER_ONLY=sqlite npx tsx bench/ledger.ts`): on a shared
 * machine, one database at a time. Unset: every row. The ledger runs from dist/ (the built
 * package, as merchants run it; built first when older than src/), or from src/ through tsx with
 * BENCH_LEDGER_FROM=src (bench/sql-entry.ts says what that adds).
 *
 * @module
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { fileURLToPath, pathToFileURL } from 'node:url';
import mysql from 'mysql2/promise';
import postgres from 'postgres';
import type { SqlClient, SqlLedger } from '../src/sql/index.js';
import { ledgerStatementsOf } from '../src/sql/dialects/ledger-statements-of.js';
import { checkTableName } from '../src/sql/dialects/table-name.js';
import { claimRowOf } from '../src/sql/ledger/claim-key.js';
import { claimOf, markRow } from '../src/sql/ledger/claims.js';
import { handledBit, KEPT_FOR_GOOD } from '../src/sql/ledger/handled-statuses.js';
import { lifecycleRank, supersedesNothing } from '../src/webhooks/lifecycle.js';
import { hasMariadb, MariadbServer } from '../test/helpers/mariadb.js';
import { recordStatements } from '../test/helpers/mysql2-statements.js';
import { recordingPgPool } from '../test/helpers/pg-queries.js';
import { hasPostgres, PostgresServer } from '../test/helpers/postgres.js';
import { envInt, machineInfo, median, table, timeRound } from './harness.js';
import { pidIn, processTreeCpuMs } from './server-cpu.js';
import { sqlEntry, type SqlEntry } from './sql-entry.js';

const RESULTS_FILE = fileURLToPath(new URL('./results/ledger.json', import.meta.url));
const IN_FLIGHT = 64;
/** The bench's rows, as BENCH_LEDGER_ONLY names them. */
const ROW_NAMES = ['node-postgres', 'postgres.js', 'mariadb', 'sqlite'] as const;
type RowName = (typeof ROW_NAMES)[number];

export interface LedgerBenchRow {
  client: string;
  /** Median callbacks per second through SqlLedger.run. */
  ledgerPerSec: number;
  /** Median insert-if-absent + COMMIT per second, same client and database. */
  floorPerSec: number;
  /** Median of the ledger's claim of a SUCCESS (its own statement) + COMMIT per second, same client, in the floor's loop. */
  claimFloorPerSec: number;
  /** Round trips per handled callback (BEGIN and COMMIT included; a pipeline under one Sync is one), when counted. */
  roundTripsPerCallback: number | undefined;
  /** Round trips of the floor per callback. */
  floorRoundTrips: number | undefined;
  /** CPU per callback of this process (the client), in µs, over the measured rounds. */
  clientCpuUs: PerVariant;
  /** CPU per callback of the database server, in µs (undefined: in-process, or /proc cannot say). */
  serverCpuUs: PerVariant | undefined;
}

/** One figure for each of a row's three loops. */
export interface PerVariant {
  ledger: number;
  floor: number;
  claim: number;
}

let seq = 0;
const DAY = 86_400_000;

/** A callback as the webhook handler runs it: a SUCCESS with its payment order, a no-op handler. */
function ledgerCallback<Tx>(ledger: SqlLedger<Tx>): () => Promise<void> {
  return async () => {
    const payment = `PAY_BENCH_${process.pid}_${++seq}`;
    const run = await ledger.run(`payment:${payment}:SUCCESS`, () => undefined, {
      raiseMark: false,
      completedTtlMs: DAY,
      order: { paymentId: payment, rank: lifecycleRank('SUCCESS') },
    });
    if (run.outcome !== 'processed') throw new Error(`bench callback ${run.outcome}`);
  };
}

/** A row's three loops measured: median callbacks/s, and CPU per callback of client and server. */
interface Rates {
  perSec: PerVariant;
  clientCpuUs: PerVariant;
  serverCpuUs: PerVariant | undefined;
}

/**
 * Times the three loops in interleaved rounds. `serverCpuMs` reads the server's CPU so far (ms),
 * or undefined for a database in this process.
 */
async function rates(
  loops: Record<keyof PerVariant, () => Promise<void>>,
  ops: number,
  rounds: number,
  serverCpuMs: () => number | undefined = () => undefined,
): Promise<Rates> {
  const warm = Math.min(ops, 300);
  const names = ['ledger', 'floor', 'claim'] as const;
  for (const name of names) await timeRound(warm, IN_FLIGHT, loops[name]);
  const perSec = { ledger: [] as number[], floor: [] as number[], claim: [] as number[] };
  const clientUs: PerVariant = { ledger: 0, floor: 0, claim: 0 };
  const serverUs: PerVariant = { ledger: 0, floor: 0, claim: 0 };
  let serverKnown = true;
  // Interleaved rounds: a slower moment of the shared machine falls on each.
  for (let r = 0; r < rounds; r++) {
    for (const name of names) {
      const before = serverCpuMs();
      const sample = await timeRound(ops, IN_FLIGHT, loops[name]);
      const after = serverCpuMs();
      perSec[name].push(sample.opsPerSec);
      clientUs[name] += sample.cpuUsPerOp / rounds;
      if (before === undefined || after === undefined) serverKnown = false;
      else serverUs[name] += ((after - before) * 1000) / ops / rounds;
    }
  }
  return {
    perSec: { ledger: median(perSec.ledger), floor: median(perSec.floor), claim: median(perSec.claim) },
    clientCpuUs: clientUs,
    serverCpuUs: serverKnown ? serverUs : undefined,
  };
}

/** A bench row from its loops' rates. */
const rowOf = (
  client: string,
  measured: Rates,
  roundTrips: { perCallback: number; floor: number } | undefined,
): LedgerBenchRow => ({
  client,
  ledgerPerSec: measured.perSec.ledger,
  floorPerSec: measured.perSec.floor,
  claimFloorPerSec: measured.perSec.claim,
  roundTripsPerCallback: roundTrips?.perCallback,
  floorRoundTrips: roundTrips?.floor,
  clientCpuUs: measured.clientCpuUs,
  serverCpuUs: measured.serverCpuUs,
});

/** Each dialect's statements, built once: only for which row a claim takes, outside the timed loops. */
const STATEMENTS = {
  postgres: ledgerStatementsOf('postgres', checkTableName('bench_claim')),
  mysql: ledgerStatementsOf('mysql', checkTableName('bench_claim')),
  sqlite: ledgerStatementsOf('sqlite', checkTableName('bench_claim')),
};

/**
 * The arguments of a fresh SUCCESS's claim, as the ledger gives its claim statement (a new payment
 * each time), its claim in the row the ledger claims on `dialect`.
 */
function successClaimArgs(dialect: keyof typeof STATEMENTS) {
  const payment = `PAY_BENCH_${process.pid}_${++seq}`;
  const key = `payment:${payment}:SUCCESS`;
  const order = { paymentId: payment, rank: lifecycleRank('SUCCESS') };
  const now = Date.now();
  // The bench's clients (node-postgres, postgres.js, mysql2, node:sqlite) each check their transaction in COMMIT.
  return {
    claim: claimOf(key, now, DAY, claimRowOf(STATEMENTS[dialect], key, order, true)),
    now,
    mark: markRow(payment),
    rank: lifecycleRank('SUCCESS'),
    markRank: supersedesNothing(),
    handled: handledBit('SUCCESS'),
    keptUntil: KEPT_FOR_GOOD,
  };
}

async function roundTripsOf(sent: string[], op: () => Promise<void>): Promise<number> {
  sent.length = 0;
  await op();
  return sent.length;
}

async function postgresRows(
  sdk: SqlEntry,
  ops: number,
  rounds: number,
  only: ReadonlySet<RowName>,
): Promise<LedgerBenchRow[]> {
  const server = await PostgresServer.start({ durable: true });
  const rows: LedgerBenchRow[] = [];
  try {
    const postmaster = pidIn(join(server.dir, 'data', 'postmaster.pid'));
    const serverCpu = () => processTreeCpuMs(postmaster);
    const { pool, sent } = recordingPgPool({ connectionString: server.url, max: 16 });
    const ledger = new sdk.SqlLedger(sdk.fromPg(pool), { table: 'bench_ledger_pg' });
    await ledger.ensureSchema();
    // The floor's table has the ledger's shape (its key and its expiry index): the same writes per insert.
    await pool.query(
      'CREATE TABLE bench_floor_pg (ledger_key VARCHAR(255) PRIMARY KEY, expires_at BIGINT NOT NULL); CREATE INDEX bench_floor_pg_expires ON bench_floor_pg (expires_at)',
    );
    const floor = async () => {
      const client = await pool.connect();
      try {
        await client.query('BEGIN');
        await client.query(
          'INSERT INTO bench_floor_pg (ledger_key, expires_at) VALUES ($1, $2) ON CONFLICT DO NOTHING',
          [`k:${++seq}`, Date.now() + DAY],
        );
        await client.query('COMMIT');
      } finally {
        client.release();
      }
    };
    const pgStatements = ledgerStatementsOf('postgres', checkTableName('bench_ledger_pg'));
    if (pgStatements.claimPath.name !== 'mark-in-claim')
      throw new Error(`Postgres's claim path is now ${pgStatements.claimPath.name}`);
    // A SUCCESS's claim, as the ledger sends it on Postgres: in the payment's row alone.
    const { claimPayment } = pgStatements.claimPath;
    const claimRows = async () => {
      const args = successClaimArgs('postgres');
      const client = await pool.connect();
      try {
        await client.query('BEGIN');
        // Prepared once per connection, as the ledger's own statements are.
        const claimed = await client.query({
          name: 'bench_claim',
          text: claimPayment.text,
          values: [...claimPayment.params(args)],
        });
        if (claimed.rowCount !== 1) throw new Error('claim floor: claim refused');
        await client.query('COMMIT');
      } finally {
        client.release();
      }
    };
    if (only.has('node-postgres')) {
      const measured = await rates({ ledger: ledgerCallback(ledger), floor, claim: claimRows }, ops, rounds, serverCpu);
      rows.push(
        rowOf('node-postgres', measured, {
          perCallback: await roundTripsOf(sent, ledgerCallback(ledger)),
          floor: await roundTripsOf(sent, floor),
        }),
      );
    }
    await pool.end();
    if (!only.has('postgres.js')) return rows;

    const sql = postgres(server.url, { max: 16, onnotice: () => undefined });
    const jsLedger = new sdk.SqlLedger(sdk.fromPostgresJs(sql), { table: 'bench_ledger_pg' });
    const jsFloor = async () => {
      await sql.begin((tx) => [
        tx`INSERT INTO bench_floor_pg (ledger_key, expires_at) VALUES (${`k:${++seq}`}, ${Date.now() + DAY}) ON CONFLICT DO NOTHING`,
      ]);
    };
    const jsClaimRows = async () => {
      const args = successClaimArgs('postgres');
      const [claimed] = await sql.begin((tx) => [
        tx.unsafe(claimPayment.text, claimPayment.params(args) as postgres.ParameterOrJSON<never>[], { prepare: true }),
      ]);
      if (claimed.count !== 1) throw new Error('claim floor: claim refused');
    };
    const measured = await rates(
      { ledger: ledgerCallback(jsLedger), floor: jsFloor, claim: jsClaimRows },
      ops,
      rounds,
      serverCpu,
    );
    rows.push(rowOf('postgres.js (pipelined)', measured, undefined));
    await sql.end({ timeout: 1 });
  } finally {
    await server.destroy();
  }
  return rows;
}

async function mariadbRows(sdk: SqlEntry, ops: number, rounds: number): Promise<LedgerBenchRow[]> {
  const server = await MariadbServer.start({ durable: true });
  try {
    const pool = mysql.createPool({ ...server.options, connectionLimit: 16 });
    const sent: string[] = [];
    // mysql2's callback connection, whatever the pool's typings say.
    pool.on('connection', (core: object) => recordStatements(core, sent));
    const counted: SqlClient<mysql.PoolConnection> = sdk.fromMysql2(pool);
    const ledger = new sdk.SqlLedger(counted, { table: 'bench_ledger_mysql' });
    await ledger.ensureSchema();
    await pool.query(
      'CREATE TABLE bench_floor_mysql (ledger_key VARCHAR(255) PRIMARY KEY, expires_at BIGINT NOT NULL, INDEX expires_at_idx (expires_at)) ENGINE=InnoDB',
    );
    const floor = async () => {
      const connection = await pool.getConnection();
      try {
        await connection.query('START TRANSACTION');
        await connection.query('INSERT IGNORE INTO bench_floor_mysql (ledger_key, expires_at) VALUES (?, ?)', [
          `k:${++seq}`,
          Date.now() + DAY,
        ]);
        await connection.query('COMMIT');
      } finally {
        connection.release();
      }
    };
    const path = ledgerStatementsOf('mysql', checkTableName('bench_ledger_mysql')).claimPath;
    if (path.name !== 'rows-beside') throw new Error(`MySQL's claim path is now ${path.name}`);
    const { claimBeside } = path;
    const claimRows = async () => {
      const args = successClaimArgs('mysql');
      const connection = await pool.getConnection();
      try {
        await connection.query('START TRANSACTION');
        const [claimed] = await connection.query<mysql.ResultSetHeader>(claimBeside.text, [
          ...claimBeside.params(args),
        ]);
        if (claimed.affectedRows !== 2) throw new Error('claim floor: claim refused');
        await connection.query('COMMIT');
      } finally {
        connection.release();
      }
    };
    const mysqld = pidIn(join(server.dir, 'mysqld.pid'));
    const measured = await rates({ ledger: ledgerCallback(ledger), floor, claim: claimRows }, ops, rounds, () =>
      processTreeCpuMs(mysqld),
    );
    const row = rowOf('mysql2 (MariaDB)', measured, {
      perCallback: await roundTripsOf(sent, ledgerCallback(ledger)),
      floor: await roundTripsOf(sent, floor),
    });
    await pool.end();
    return [row];
  } finally {
    await server.destroy();
  }
}

/**
 * The claim floor on SQLite: the ledger's claim and the payment's row, as the dialect writes
 * them, between BEGIN IMMEDIATE and COMMIT in the floor's plain loop on `db`.
 */
function sqliteClaimRows(db: DatabaseSync, table: string): () => Promise<void> {
  const sql = ledgerStatementsOf('sqlite', checkTableName(table));
  if (sql.claimPath.name !== 'claim-then-mark') throw new Error(`SQLite's claim path is now ${sql.claimPath.name}`);
  const { markClaimed } = sql.claimPath;
  const claim = db.prepare(sql.claimOrdered.text);
  const mark = db.prepare(markClaimed.text);
  const bind = (params: readonly unknown[]) =>
    params.map((value) => (typeof value === 'number' ? value : String(value)));
  return async () => {
    const args = successClaimArgs('sqlite');
    db.exec('BEGIN IMMEDIATE');
    if (claim.run(...bind(sql.claimOrdered.params(args))).changes !== 1) throw new Error('claim floor: claim refused');
    mark.run(...bind(markClaimed.params(args)));
    db.exec('COMMIT');
    await Promise.resolve();
  };
}

async function sqliteRows(sdk: SqlEntry, ops: number, rounds: number): Promise<LedgerBenchRow[]> {
  const dir = mkdtempSync(join(tmpdir(), 'myr-ledger-bench-'));
  try {
    const file = join(dir, 'ledger.db');
    const ledger = new sdk.SqlLedger(sdk.fromSqlite(file), { table: 'bench_ledger' });
    await ledger.ensureSchema();
    const db = new DatabaseSync(file);
    db.exec(
      'PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL; CREATE TABLE bench_floor (ledger_key TEXT PRIMARY KEY, expires_at INTEGER NOT NULL); CREATE INDEX bench_floor_expires ON bench_floor (expires_at)',
    );
    const insert = db.prepare('INSERT OR IGNORE INTO bench_floor (ledger_key, expires_at) VALUES (?, ?)');
    const floor = async () => {
      db.exec('BEGIN IMMEDIATE');
      insert.run(`k:${++seq}`, Date.now() + DAY);
      db.exec('COMMIT');
      await Promise.resolve();
    };
    const measured = await rates(
      { ledger: ledgerCallback(ledger), floor, claim: sqliteClaimRows(db, 'bench_ledger') },
      ops,
      rounds,
    );
    db.close();
    return [rowOf('node:sqlite (WAL, synchronous=NORMAL)', measured, undefined)];
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** The rows BENCH_LEDGER_ONLY names (every row when unset); a name it does not know stops the bench. */
function rowsAsked(): ReadonlySet<RowName> {
  const asked = process.env.BENCH_LEDGER_ONLY?.trim();
  if (!asked) return new Set(ROW_NAMES);
  const names = asked.split(',').map((name) => name.trim());
  const unknown = names.filter((name) => !ROW_NAMES.some((known) => known === name));
  if (unknown.length > 0)
    throw new Error(`BENCH_LEDGER_ONLY: unknown row ${unknown.join(', ')} (rows: ${ROW_NAMES.join(', ')})`);
  return new Set(ROW_NAMES.filter((known) => names.includes(known)));
}

export async function runLedgerBench(): Promise<void> {
  const ops = envInt('BENCH_LEDGER_OPS', 2_000);
  const rounds = envInt('BENCH_ROUNDS', 5);
  const only = rowsAsked();
  const { sdk, from } = await sqlEntry();
  console.log(`SqlLedger and its adapters from ${from === 'dist' ? 'dist/ (the built package)' : 'src/ through tsx'}`);
  const rows: LedgerBenchRow[] = [];
  if (only.has('node-postgres') || only.has('postgres.js')) {
    if (hasPostgres()) rows.push(...(await postgresRows(sdk, ops, rounds, only)));
    else console.log('PostgreSQL 15 is not installed: Postgres rows skipped');
  }
  if (only.has('mariadb')) {
    if (hasMariadb()) rows.push(...(await mariadbRows(sdk, ops, rounds)));
    else console.log('MariaDB is not installed: MariaDB rows skipped');
  }
  if (only.has('sqlite')) rows.push(...(await sqliteRows(sdk, ops, rounds)));

  console.log(
    table(
      [
        'client',
        `ledger callbacks/s (${IN_FLIGHT} in flight)`,
        'floor: insert+commit/s',
        'ledger / floor (issue 31 goal >= 0.8)',
        'claim floor: claim+commit/s',
        'ledger / claim floor',
        'round trips per callback (floor)',
      ],
      rows.map((r) => [
        r.client,
        r.ledgerPerSec.toFixed(0),
        r.floorPerSec.toFixed(0),
        `${(r.ledgerPerSec / r.floorPerSec).toFixed(2)}x`,
        r.claimFloorPerSec.toFixed(0),
        `${(r.ledgerPerSec / r.claimFloorPerSec).toFixed(2)}x`,
        r.roundTripsPerCallback === undefined ? '-' : `${r.roundTripsPerCallback} (${r.floorRoundTrips})`,
      ]),
    ),
  );
  const us = (figures: PerVariant | undefined) =>
    figures === undefined
      ? '-'
      : `${figures.ledger.toFixed(0)} / ${figures.floor.toFixed(0)} / ${figures.claim.toFixed(0)}`;
  console.log(
    table(
      [
        'client',
        'client CPU µs per callback: ledger / floor / claim',
        'server CPU µs per callback: ledger / floor / claim',
      ],
      rows.map((r) => [r.client, us(r.clientCpuUs), us(r.serverCpuUs)]),
    ),
  );
  await mkdir(fileURLToPath(new URL('./results/', import.meta.url)), { recursive: true });
  await writeFile(
    RESULTS_FILE,
    `${JSON.stringify({ machine: machineInfo(), from, ops, rounds, inFlight: IN_FLIGHT, rows }, null, 2)}\n`,
  );
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) await runLedgerBench();
