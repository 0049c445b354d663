import { describe, expect, it } from 'vitest';
import {
  aborted,
  connectionLost,
  constraintBroken,
  isConflict,
  storeFailure,
} from '../../../src/sql/database-errors.js';

describe('isConflict: which database errors mean "another transaction holds the rows" (409, never 500)', () => {
  it.each([
    ['Postgres serialization_failure', { code: '40001' }],
    ['Postgres deadlock_detected', { code: '40P01' }],
    ['Postgres lock_not_available (lock_timeout)', { code: '55P03' }],
    ['MySQL deadlock', { code: 'ER_LOCK_DEADLOCK', errno: 1213 }],
    ['MySQL lock wait timeout', { code: 'ER_LOCK_WAIT_TIMEOUT', errno: 1205 }],
    ['MariaDB errno only', { errno: 1205 }],
    ['node:sqlite SQLITE_BUSY', { code: 'ERR_SQLITE_ERROR', errcode: 5 }],
    ['node:sqlite extended SQLITE_BUSY_SNAPSHOT', { code: 'ERR_SQLITE_ERROR', errcode: 5 | (2 << 8) }],
    ['an ORM wrapping the driver error', { message: 'Failed query', cause: { code: '40P01' } }],
    [
      'Prisma, a raw statement deadlocked on MariaDB (P2010)',
      {
        code: 'P2010',
        meta: { driverAdapterError: { cause: { originalCode: '1213', kind: 'TransactionWriteConflict' } } },
      },
    ],
    [
      'Prisma, a raw statement past lock_timeout on Postgres (P2010)',
      { code: 'P2010', meta: { driverAdapterError: { cause: { originalCode: '55P03', kind: 'postgres' } } } },
    ],
    ["Prisma, an interactive transaction's write conflict (P2034)", { code: 'P2034' }],
  ])('%s is a conflict', (_, error) => {
    expect(isConflict(error)).toBe(true);
  });

  it.each([
    ['Postgres unique_violation', { code: '23505' }],
    ['Postgres undefined_table', { code: '42P01' }],
    ['a refused connection', { code: 'ECONNREFUSED' }],
    [
      "Prisma, a raw statement's unique violation (P2010)",
      {
        code: 'P2010',
        meta: { driverAdapterError: { cause: { originalCode: '23505', kind: 'UniqueConstraintViolation' } } },
      },
    ],
    ['node:sqlite constraint', { code: 'ERR_SQLITE_ERROR', errcode: 19 }],
    ['a plain Error', new Error('boom')],
    ['a string', '40001'],
    ['nothing', undefined],
  ])('%s is not', (_, error) => {
    expect(isConflict(error)).toBe(false);
  });

  it('follows causes only so deep (a cyclic cause cannot loop)', () => {
    const cyclic: { cause?: unknown } = {};
    cyclic.cause = cyclic;
    expect(isConflict(cyclic)).toBe(false);
  });
});

describe('connectionLost: which errors mean nothing more can be sent on the connection', () => {
  it.each([
    [{ code: 'CONNECTION_CLOSED' }, true],
    [{ code: 'CONNECTION_DESTROYED' }, true],
    [{ code: 'CONNECTION_ENDED' }, true],
    [{ code: 'CONNECT_TIMEOUT' }, true],
    [{ code: 'ECONNRESET', syscall: 'read' }, true],
    [{ code: 'EPIPE', syscall: 'write' }, true],
    [{ code: '57P01', severity: 'FATAL' }, true],
    [{ code: 'XX000', severity: 'PANIC' }, true],
    [{ code: '23505', severity: 'ERROR' }, false],
    [{ code: '55P03', severity: 'ERROR' }, false],
    [{ code: 'ER_LOCK_WAIT_TIMEOUT', errno: 1205 }, false],
    [new Error('the warehouse API is down'), false],
    [undefined, false],
    ['CONNECTION_CLOSED', false],
  ])('%o → %s', (error, lost) => {
    expect(connectionLost(error)).toBe(lost);
  });
});

describe('constraintBroken: a deferred constraint refused at COMMIT (the work failed, nothing committed)', () => {
  it.each([
    [{ code: '23503', severity: 'ERROR' }, true],
    [{ code: '23505' }, true],
    [Object.assign(new Error('Failed query: commit'), { cause: { code: '23514' } }), true],
    // Prisma: a DriverAdapterError whose cause carries the SQLSTATE as originalCode.
    [
      Object.assign(new Error('DriverAdapterError'), {
        cause: { kind: 'ForeignKeyConstraintViolation', originalCode: '23503' },
      }),
      true,
    ],
    // SQLite: node:sqlite's extended errcode, whose low byte is SQLITE_CONSTRAINT (19); better-sqlite3's code string.
    [{ code: 'ERR_SQLITE_ERROR', errcode: 787, errstr: 'constraint failed' }, true],
    [{ code: 'ERR_SQLITE_ERROR', errcode: 19 }, true],
    [{ code: 'SQLITE_CONSTRAINT_FOREIGNKEY' }, true],
    [{ code: 'ERR_SQLITE_ERROR', errcode: 5 }, false],
    [{ code: 'ERR_SQLITE_ERROR', errcode: 10 | (12 << 8) }, false],
    [{ code: 'SQLITE_BUSY' }, false],
    [{ code: '25P02' }, false],
    [{ code: '40001' }, false],
    [{ code: 23503 }, false],
    [{ code: 'ECONNRESET', syscall: 'read' }, false],
    [new Error('no code'), false],
    [undefined, false],
  ])('%o: %s', (error, expected) => {
    expect(constraintBroken(error)).toBe(expected);
  });
});

describe('aborted: a statement of the work failed and the work caught it (the transaction is aborted: 500)', () => {
  it.each([
    [{ code: '25P02' }, true],
    // Prisma: a raw statement's failure (P2010) carries the driver's code under meta.driverAdapterError.cause.
    [{ code: 'P2010', meta: { driverAdapterError: { cause: { originalCode: '25P02' } } } }, true],
    [Object.assign(new Error('Failed query'), { cause: { code: '25P02' } }), true],
    [{ code: '25P01' }, false],
    [{ code: '23503' }, false],
    [null, false],
  ])('%o: %s', (error, expected) => {
    expect(aborted(error)).toBe(expected);
  });
});

describe("storeFailure: the log line of a failed store, in the database's own words", () => {
  const table = 'myr_webhook_ledger';
  const said = (error: unknown) =>
    storeFailure(error, table).replace(`the idempotency store failed on the SQL ledger table ${table}: `, '');
  it.each([
    [
      'node-postgres',
      Object.assign(new Error('relation "myr_webhook_ledger" does not exist'), { code: '42P01' }),
      'relation "myr_webhook_ledger" does not exist (42P01)',
    ],
    [
      'mysql2 (code name and number)',
      Object.assign(new Error("Table 'shop.myr_webhook_ledger' doesn't exist"), {
        code: 'ER_NO_SUCH_TABLE',
        errno: 1146,
      }),
      "Table 'shop.myr_webhook_ledger' doesn't exist (ER_NO_SUCH_TABLE 1146)",
    ],
    [
      'a system error (its negative errno says nothing more)',
      Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), {
        code: 'ECONNREFUSED',
        errno: -111,
        syscall: 'connect',
      }),
      'connect ECONNREFUSED 127.0.0.1:5432 (ECONNREFUSED)',
    ],
    [
      'refused on every address (AggregateError)',
      Object.assign(
        new AggregateError([Object.assign(new Error('connect ECONNREFUSED ::1:5432'), { code: 'ECONNREFUSED' })], ''),
        { code: 'ECONNREFUSED' },
      ),
      'connect ECONNREFUSED ::1:5432 (ECONNREFUSED)',
    ],
    [
      "an ORM's wrapping (its message quotes the statement's values): the driver's error under it",
      Object.assign(new Error('Failed query: UPDATE orders SET card = $1\nparams: 4111111111111111'), {
        cause: Object.assign(new Error('relation "orders" does not exist'), { code: '42P01' }),
      }),
      'relation "orders" does not exist (42P01)',
    ],
    [
      "Prisma's driver adapter error, under meta",
      Object.assign(new Error('Raw query failed. Code: `42P01`'), {
        code: 'P2010',
        meta: {
          driverAdapterError: Object.assign(new Error('TableDoesNotExist'), {
            cause: {
              originalCode: '42P01',
              originalMessage: 'relation "myr_webhook_ledger" does not exist',
              kind: 'postgres',
            },
          }),
        },
      }),
      'relation "myr_webhook_ledger" does not exist (42P01)',
    ],
    [
      'a password in a connection string',
      Object.assign(new Error('could not reach postgres://shop:S3cret@db:5432/shop'), { code: 'ENOTFOUND' }),
      'could not reach postgres://shop:***@db:5432/shop (ENOTFOUND)',
    ],
    [
      'a password setting',
      Object.assign(new Error('invalid option password=S3cret; host=db'), { code: 'XX000' }),
      'invalid option password=***; host=db (XX000)',
    ],
    [
      "MySQL's refusal of a password, in its own words (it says whether one was given, never which)",
      Object.assign(new Error("Access denied for user 'shop'@'127.0.0.1' (using password: YES)"), {
        code: 'ER_ACCESS_DENIED_ERROR',
        errno: 1045,
      }),
      "Access denied for user 'shop'@'127.0.0.1' (using password: YES) (ER_ACCESS_DENIED_ERROR 1045)",
    ],
    [
      "MySQL's refusal without a password",
      Object.assign(new Error("Access denied for user 'shop'@'127.0.0.1' (using password: NO)"), {
        code: 'ER_ACCESS_DENIED_ERROR',
        errno: 1045,
      }),
      "Access denied for user 'shop'@'127.0.0.1' (using password: NO) (ER_ACCESS_DENIED_ERROR 1045)",
    ],
    [
      "a password in brackets that only looks like MySQL's words",
      Object.assign(new Error('bad login (using password: S3cret)'), { code: 'XX000' }),
      'bad login (using password: *** (XX000)',
    ],
    [
      "a connection string's query parameters that carry secrets",
      Object.assign(
        new Error(
          'could not reach postgres://shop@db:5432/shop?sslmode=require&password=S3cret&sslpassword=K3y&api_token=T0k',
        ),
        { code: 'ENOTFOUND' },
      ),
      'could not reach postgres://shop@db:5432/shop?sslmode=require&password=***&sslpassword=***&api_token=*** (ENOTFOUND)',
    ],
    ['no code anywhere', new TypeError('socket hang up'), 'a TypeError without a database code'],
  ])('%s', (_, error, expected) => {
    expect(said(error)).toBe(expected);
  });

  it('names the table, and cuts a long message at 300 characters', () => {
    const line = storeFailure(Object.assign(new Error('x'.repeat(1000)), { code: '54000' }), 'payments.webhook_ledger');
    expect(line).toBe(
      `the idempotency store failed on the SQL ledger table payments.webhook_ledger: ${'x'.repeat(300)} (54000)`,
    );
  });
});
