/**
 * What a merchant's handler does with mysql2's `tx` that it should not, on a real MariaDB 10.11:
 * it catches a deadlock (or, on a server with innodb_rollback_on_timeout, a lock wait timeout)
 * and goes on, while InnoDB has rolled back the whole transaction with the ledger's claim and a
 * duplicate of the callback takes the key (in the same ms: the same expiry, so only the claim's
 * own id tells the rows apart; also through Kysely, Drizzle and Prisma, which cannot see the
 * handler's errors); it keeps `tx` and writes after its run ended; it calls `tx.release()`, the
 * habit of every mysql2 code that checks a connection out. None of them may fulfil a callback twice.
 */
import { PrismaMariaDb } from '@prisma/adapter-mariadb';
import { sql } from 'drizzle-orm';
import { drizzle } from 'drizzle-orm/mysql2';
import { Kysely, MysqlDialect, sql as ksql } from 'kysely';
import { createPool as createCallbackPool, type Pool as CallbackPool } from 'mysql2';
import mysql from 'mysql2/promise';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import {
  fromDrizzle,
  fromKysely,
  fromMysql2,
  fromPrisma,
  type PrismaLike,
  type SqlLedgerOptions,
} from '../../../../src/sql/index.js';
import type { LedgerRun } from '../../../../src/webhooks/index.js';
import { mariadbForFile } from '../../../helpers/database-for-file.js';
import { generatePrismaClient, removePrismaClients } from '../../../helpers/prisma.js';
import { atMs } from '../../../helpers/same-ms.js';
import { newLedger } from '../scenarios.js';

const db = mariadbForFile({ connectionLimit: 4 });
/** A server that rolls back the whole transaction on a lock wait timeout. */
const rot = mariadbForFile({ args: ['--innodb-rollback-on-timeout=1'], connectionLimit: 4 });
let admin: mysql.Pool;
let rotAdmin: mysql.Pool;
let callbackPool: CallbackPool;

async function tables(on: mysql.Pool): Promise<void> {
  await on.query('CREATE TABLE orders (payment_id VARCHAR(100) NOT NULL, attempt INT NOT NULL)');
  await on.query('CREATE TABLE stock (id INT PRIMARY KEY) ENGINE=InnoDB');
  await on.query('INSERT INTO stock (id) VALUES (1), (2)');
  await on.query('CREATE TABLE audit (n INT NOT NULL)');
}

beforeAll(async () => {
  admin = mysql.createPool({ ...db.server.options, connectionLimit: 2 });
  rotAdmin = mysql.createPool({ ...rot.server.options, connectionLimit: 2 });
  callbackPool = createCallbackPool({ ...db.server.options, connectionLimit: 4 });
  await Promise.all([tables(admin), tables(rotAdmin)]);
});
afterAll(async () => {
  await Promise.all([admin, rotAdmin].map((each) => each?.end()));
  await new Promise((resolve) => (callbackPool ? callbackPool.end(resolve) : resolve(undefined)));
});

const OPTIONS = { raiseMark: false, completedTtlMs: 86_400_000 } as const;
type Tx = mysql.PoolConnection;

async function orders(on: mysql.Pool, payment: string): Promise<number> {
  const [rows] = await on.query<mysql.RowDataPacket[]>('SELECT count(*) AS n FROM orders WHERE payment_id = ?', [
    payment,
  ]);
  return Number(rows[0]?.n);
}

/** Sends one statement through a run's `tx`, whatever its client. */
type Send = (text: string) => Promise<unknown>;
const throughMysql2 =
  (tx: Tx): Send =>
  (text) =>
    tx.query(text);

/**
 * Makes the run's transaction a deadlock's victim: another session, heavier (InnoDB rolls back the
 * lighter one), locks the rows in the other order. Answers the error `tx` met, caught.
 */
async function deadlock(tx: Tx | Send): Promise<unknown> {
  const send = typeof tx === 'function' ? tx : throughMysql2(tx);
  const other = await admin.getConnection();
  try {
    await other.query('START TRANSACTION');
    await other.query('UPDATE stock SET id = id WHERE id = 2');
    await other.query('INSERT INTO audit (n) SELECT seq FROM seq_1_to_50');
    await send('SELECT id FROM stock WHERE id = 1 FOR UPDATE');
    const waiting = send('SELECT id FROM stock WHERE id = 2 FOR UPDATE').then(
      () => undefined,
      (error: unknown) => error,
    );
    // Sent and running: waiting for the row (a statement Prisma prepared waits in the optimizer's
    // 'Statistics' state, which innodb_trx does not list as LOCK WAIT).
    await vi.waitFor(async () => {
      const [rows] = await admin.query<mysql.RowDataPacket[]>(
        "SELECT count(*) AS n FROM information_schema.processlist WHERE command IN ('Query', 'Execute') AND info LIKE '%WHERE id = 2 FOR UPDATE'",
      );
      expect(Number(rows[0]?.n)).toBe(1);
    });
    const closing = other.query('SELECT id FROM stock WHERE id = 1 FOR UPDATE').catch(() => undefined);
    const met = await waiting;
    await closing;
    await other.query('ROLLBACK');
    return met;
  } finally {
    other.release();
  }
}

const order = (payment: string, attempt: number) => async (tx: Tx) =>
  void (await tx.query('INSERT INTO orders (payment_id, attempt) VALUES (?, ?)', [payment, attempt]));

describe('a handler that catches a deadlock and goes on (mysql2, MariaDB)', () => {
  it('is not committed when a duplicate of the same ms claimed the key meanwhile: the payment is fulfilled once', async () => {
    const ledger = await newLedger(fromMysql2(db.pool), { lockTimeoutMs: 10_000 });
    const now = Date.now();
    let duplicate: Promise<LedgerRun<void>> | undefined;
    let met: unknown;
    const first = await atMs(now, () =>
      ledger.run(
        'payment:PAY_DL:SUCCESS',
        async (tx) => {
          await order('PAY_DL', 1)(tx);
          // Waits on the key; claims it once the deadlock rolled the first one's claim back, and commits.
          duplicate = atMs(now, () => ledger.run('payment:PAY_DL:SUCCESS', order('PAY_DL', 3), OPTIONS));
          met = await deadlock(tx);
          await duplicate;
          await order('PAY_DL', 2)(tx);
        },
        OPTIONS,
      ),
    );

    expect(met).toMatchObject({ errno: 1213 });
    expect((await duplicate)?.outcome).toBe('processed');
    expect(first.outcome).toBe('failed');
    expect(await orders(admin, 'PAY_DL')).toBe(1);
  });
});

/** A Prisma client (@prisma/adapter-mariadb) on the server, generated on first use (test/helpers/prisma.ts). */
let prisma: (PrismaLike & { $disconnect(): Promise<void> }) | undefined;
async function prismaClient(): Promise<PrismaLike> {
  if (prisma === undefined) {
    const { PrismaClient } = (await import(generatePrismaClient('mysql'))) as {
      PrismaClient: new (options: { adapter: unknown }) => NonNullable<typeof prisma>;
    };
    const { host, port, user, database } = db.server.options;
    prisma = new PrismaClient({ adapter: new PrismaMariaDb({ host, port, user, database, connectionLimit: 4 }) });
  }
  return prisma;
}
afterAll(async () => {
  await prisma?.$disconnect();
  removePrismaClients();
});

type Run = (key: string, work: (send: Send) => Promise<void>) => Promise<LedgerRun<void>>;
/** Each ORM adapter over MariaDB, as a run whose work sends raw statements through the ORM's `tx`. */
const orms: Record<string, (options?: SqlLedgerOptions) => Promise<Run>> = {
  Kysely: async (options) => {
    const ledger = await newLedger(
      fromKysely(new Kysely<Record<string, never>>({ dialect: new MysqlDialect({ pool: callbackPool }) })),
      options,
    );
    return (key, work) => ledger.run(key, (tx) => work((text) => ksql.raw(text).execute(tx)), OPTIONS);
  },
  Drizzle: async (options) => {
    const ledger = await newLedger(fromDrizzle(drizzle(db.pool)), options);
    return (key, work) => ledger.run(key, (tx) => work((text) => tx.execute(sql.raw(text))), OPTIONS);
  },
  Prisma: async (options) => {
    const ledger = await newLedger(fromPrisma(await prismaClient()), options);
    return (key, work) =>
      ledger.run(
        key,
        (tx) =>
          work(async (text) => (text.startsWith('SELECT') ? tx.$queryRawUnsafe(text) : tx.$executeRawUnsafe(text))),
        OPTIONS,
      );
  },
};

describe('a handler that catches a deadlock and goes on (Kysely, Drizzle over mysql2, Prisma, MariaDB)', () => {
  // The ORM opens the transaction with START TRANSACTION: after InnoDB rolled it back, a session
  // in autocommit would commit the handler's next write on its own, outside the ledger.
  // Drizzle wraps the driver's error ("Failed query: …") with it as the cause; Prisma keeps the
  // server's code as a string in its driver adapter's error.
  const isDeadlock = (error: unknown): boolean => {
    const drizzleCause: unknown = typeof error === 'object' && error !== null ? Reflect.get(error, 'cause') : undefined;
    const prismaCause = (
      error as { meta?: { driverAdapterError?: { cause?: { originalCode?: unknown } } } } | undefined
    )?.meta?.driverAdapterError?.cause;
    return (
      prismaCause?.originalCode === '1213' ||
      [error, drizzleCause].some((each) => (each as { errno?: unknown } | undefined)?.errno === 1213)
    );
  };
  for (const [name, orm] of Object.entries(orms)) {
    it(`${name}: nothing of the run commits, and the retry fulfils the payment once`, async () => {
      const run = await orm();
      const payment = `PAY_DL_${name}`;
      const write = (send: Send, attempt: number) =>
        send(`INSERT INTO orders (payment_id, attempt) VALUES ('${payment}', ${attempt})`);
      let met: unknown;
      const first = await run(`payment:${payment}:SUCCESS`, async (send) => {
        await write(send, 1);
        met = await deadlock(send);
        await write(send, 2);
      });
      expect(met).toSatisfy(isDeadlock);
      expect(first.outcome).toBe('failed');
      expect(await orders(admin, payment)).toBe(0);
      const retried = await run(`payment:${payment}:SUCCESS`, (send) => write(send, 3).then(() => undefined));
      expect(retried.outcome).toBe('processed');
      expect(await orders(admin, payment)).toBe(1);
    });

    it(`${name}: is not committed when a duplicate of the same ms claimed the key meanwhile: the payment is fulfilled once`, async () => {
      // The duplicate waits for the key until the deadlock has rolled the first one's claim back.
      const run = await orm({ lockTimeoutMs: 10_000 });
      const payment = `PAY_DLD_${name}`;
      const key = `payment:${payment}:SUCCESS`;
      const write = (send: Send, attempt: number) =>
        send(`INSERT INTO orders (payment_id, attempt) VALUES ('${payment}', ${attempt})`);
      const now = Date.now();
      let duplicate: Promise<LedgerRun<void>> | undefined;
      let met: unknown;
      const first = await atMs(now, () =>
        run(key, async (send) => {
          await write(send, 1);
          duplicate = atMs(now, () => run(key, (other) => write(other, 3).then(() => undefined)));
          met = await deadlock(send);
          await duplicate;
          await write(send, 2);
        }),
      );

      expect(met).toSatisfy(isDeadlock);
      expect(await orders(admin, payment)).toBe(1);
      expect((await duplicate)?.outcome).toBe('processed');
      expect(first.outcome).toBe('failed');
    });
  }
});

describe('a handler that catches a lock wait timeout and goes on (mysql2, MariaDB)', () => {
  async function holdStock(on: mysql.Pool): Promise<mysql.PoolConnection> {
    const holder = await on.getConnection();
    await holder.query('START TRANSACTION');
    await holder.query('SELECT id FROM stock WHERE id = 1 FOR UPDATE');
    return holder;
  }
  const waitForStock = (tx: Tx) =>
    tx.query('SELECT id FROM stock WHERE id = 1 FOR UPDATE').then(
      () => undefined,
      (error: unknown) => error,
    );

  it("commits once on a server that rolls back only the statement (the default): its retried statement is in the claim's transaction", async () => {
    const ledger = await newLedger(fromMysql2(db.pool), { lockTimeoutMs: 1000 });
    const holder = await holdStock(admin);
    let met: unknown;
    try {
      const run = await ledger.run(
        'payment:PAY_LW:SUCCESS',
        async (tx) => {
          await order('PAY_LW', 1)(tx);
          met = await waitForStock(tx);
          await holder.query('ROLLBACK');
          await tx.query('SELECT id FROM stock WHERE id = 1 FOR UPDATE');
        },
        OPTIONS,
      );
      expect(met).toMatchObject({ errno: 1205 });
      expect(run.outcome).toBe('processed');
    } finally {
      holder.release();
    }
    expect(await orders(admin, 'PAY_LW')).toBe(1);
  });

  it('is not committed on a server with innodb_rollback_on_timeout when a duplicate of the same ms claimed the key meanwhile', async () => {
    const { table } = await newLedger(fromMysql2(rot.pool));
    const impatient = await newLedger(fromMysql2(rot.pool), { table, lockTimeoutMs: 1000 });
    // The duplicate waits for the key longer than the first waits for the stock.
    const patient = await newLedger(fromMysql2(rot.pool), { table, lockTimeoutMs: 10_000 });
    const holder = await holdStock(rotAdmin);
    const now = Date.now();
    let duplicate: Promise<LedgerRun<void>> | undefined;
    let met: unknown;
    try {
      const first = await atMs(now, () =>
        impatient.run(
          'payment:PAY_RT:SUCCESS',
          async (tx) => {
            await order('PAY_RT', 1)(tx);
            duplicate = atMs(now, () => patient.run('payment:PAY_RT:SUCCESS', order('PAY_RT', 3), OPTIONS));
            met = await waitForStock(tx);
            await holder.query('ROLLBACK');
            await duplicate;
            await order('PAY_RT', 2)(tx);
          },
          OPTIONS,
        ),
      );
      expect(met).toMatchObject({ errno: 1205 });
      expect((await duplicate)?.outcome).toBe('processed');
      expect(first.outcome).toBe('failed');
    } finally {
      holder.release();
    }
    expect(await orders(rotAdmin, 'PAY_RT')).toBe(1);
  });
});

describe("the handler's tx once its run ended (mysql2, MariaDB)", () => {
  it('refuses a write the handler sends after it threw: the retry fulfils the payment once', async () => {
    const ledger = await newLedger(fromMysql2(db.pool));
    let kept: Tx | undefined;
    const failed = await ledger.run(
      'payment:PAY_LATE:SUCCESS',
      (tx) => {
        kept = tx;
        throw new Error('handler bug, with a write still to come');
      },
      OPTIONS,
    );
    expect(failed.outcome).toBe('failed');
    await expect(kept?.query('INSERT INTO orders (payment_id, attempt) VALUES (?, 1)', ['PAY_LATE'])).rejects.toThrow(
      /after its run had ended/,
    );

    const retried = await ledger.run(
      'payment:PAY_LATE:SUCCESS',
      async (tx) => void (await tx.query('INSERT INTO orders (payment_id, attempt) VALUES (?, 2)', ['PAY_LATE'])),
      OPTIONS,
    );
    expect(retried.outcome).toBe('processed');
    expect(await orders(admin, 'PAY_LATE')).toBe(1);
  });

  it('refuses it on Drizzle over mysql2 too: the retry fulfils the payment once', async () => {
    const ledger = await newLedger(fromDrizzle(drizzle(db.pool)));
    const write = (tx: { execute(query: ReturnType<typeof sql>): Promise<unknown> }, attempt: number) =>
      tx.execute(sql`INSERT INTO orders (payment_id, attempt) VALUES (${'PAY_LATE_DZ'}, ${attempt})`);
    let kept: Parameters<Parameters<typeof ledger.run>[1]>[0] | undefined;
    const failed = await ledger.run(
      'payment:PAY_LATE_DZ:SUCCESS',
      (tx) => {
        kept = tx;
        throw new Error('handler bug, with a write still to come');
      },
      OPTIONS,
    );
    expect(failed.outcome).toBe('failed');
    // Drizzle wraps the driver's error ("Failed query: …") with it as the cause.
    await expect(kept && write(kept, 1)).rejects.toMatchObject({
      cause: { message: expect.stringMatching(/after its run had ended/) },
    });

    const retried = await ledger.run('payment:PAY_LATE_DZ:SUCCESS', async (tx) => void (await write(tx, 2)), OPTIONS);
    expect(retried.outcome).toBe('processed');
    expect(await orders(admin, 'PAY_LATE_DZ')).toBe(1);
  });

  it('keeps its connection when the handler calls tx.release(): the pool does not hand it to another caller mid-run', async () => {
    const single = mysql.createPool({ ...db.server.options, connectionLimit: 1 });
    try {
      const ledger = await newLedger(fromMysql2(single));
      let waiting: Promise<mysql.PoolConnection> | undefined;
      const run = await ledger.run(
        'payment:PAY_REL:SUCCESS',
        async (tx) => {
          await tx.query('INSERT INTO orders (payment_id, attempt) VALUES (?, 1)', ['PAY_REL']);
          tx.release();
          waiting = single.getConnection();
          // A free connection is handed out on the next tick; a statement takes a round trip.
          return Promise.race([waiting.then(() => 'handed out'), tx.query('SELECT 1').then(() => "still the run's")]);
        },
        OPTIONS,
      );
      expect(run).toEqual({ outcome: 'processed', value: "still the run's" });
      (await waiting)?.release();
      expect(await orders(admin, 'PAY_REL')).toBe(1);
    } finally {
      await single.end();
    }
  });
});

describe("every MySQL adapter runs the ledger's transaction READ COMMITTED (the claims need it: dialects/mysql/session.ts)", () => {
  // Read as the transaction behaves: a second read sees a row another connection committed after
  // the first one (READ COMMITTED), where REPEATABLE READ keeps the first read's snapshot.
  const count = (answer: unknown) =>
    Number(
      /"n":"?(\d+)/.exec(
        JSON.stringify(answer, (_key, value: unknown) => (typeof value === 'bigint' ? String(value) : value)),
      )?.[1],
    );
  const runs: Record<string, () => Promise<Run>> = {
    mysql2: async () => {
      const ledger = await newLedger(fromMysql2(db.pool));
      return (key, work) => ledger.run(key, (tx) => work(async (text) => (await tx.query(text))[0]), OPTIONS);
    },
    ...orms,
  };
  let committed = 0;
  for (const [name, run] of Object.entries(runs)) {
    it(`${name}: a read in the handler sees what another connection committed after its first read`, async () => {
      await db.pool.query('CREATE TABLE IF NOT EXISTS isolation_seen (id INT PRIMARY KEY) ENGINE=InnoDB');
      const seen: number[] = [];
      const outcome = await (
        await run()
      )(`isolation:${name}`, async (send) => {
        seen.push(count(await send('SELECT count(*) AS n FROM isolation_seen')));
        await db.pool.query('INSERT INTO isolation_seen (id) VALUES (?)', [++committed]);
        seen.push(count(await send('SELECT count(*) AS n FROM isolation_seen')));
      });
      expect(outcome.outcome).toBe('processed');
      expect(seen[1]).toBe((seen[0] ?? Number.NaN) + 1);
    });
  }
});
