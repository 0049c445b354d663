/**
 * What a database error means to the ledger, whichever client carried it: another transaction
 * holds the rows (in flight, try later), the connection is gone, a statement of the work failed
 * and the transaction is aborted, or a constraint was broken. The codes are
 * each dialect's (`dialects/<dialect>/session.ts`) and Prisma's (`adapters/prisma/prisma-errors.ts`);
 * the rules that read them, and follow an ORM's wrapping to the driver's error, are here.
 *
 * @module
 */
import { PRISMA_CONFLICT_CODES } from './adapters/prisma/prisma-errors.js';
import { errors as mysqlErrors } from './dialects/mysql/session.js';
import { errors as postgresErrors } from './dialects/postgres/session.js';
import {
  CONSTRAINT as SQLITE_CONSTRAINT,
  errors as sqliteErrors,
  isBusyCode,
  SHARED_COMMIT_FAILED,
} from './dialects/sqlite/session.js';

const DIALECTS = [postgresErrors, mysqlErrors, sqliteErrors];
const CONFLICT_CODES = new Set<unknown>(DIALECTS.flatMap((dialect) => dialect.conflictCodes));
const CONFLICT_ERRNOS = new Set<unknown>(DIALECTS.flatMap((dialect) => dialect.conflictErrnos ?? []));
const PRISMA_CONFLICTS = new Set<unknown>(PRISMA_CONFLICT_CODES);

function field(error: object, name: string): unknown {
  return name in error ? (error as Record<string, unknown>)[name] : undefined;
}

/** The error this one wraps: its `cause`, or Prisma's driver adapter error. */
function wrapped(error: object): unknown {
  const cause = field(error, 'cause');
  if (cause !== undefined) return cause;
  const meta = field(error, 'meta');
  return typeof meta === 'object' && meta !== null ? field(meta, 'driverAdapterError') : undefined;
}

/** `error` and the errors it wraps, outermost first (at most 5). */
function causes(error: unknown): object[] {
  const found: object[] = [];
  for (let depth = 0; depth < 5 && typeof error === 'object' && error !== null; depth++) {
    found.push(error);
    error = wrapped(error);
  }
  return found;
}

/**
 * Whether `error` (or one of its causes: ORMs wrap the driver's error, Prisma under `meta`) is a lock wait that
 * timed out, a deadlock or a serialization failure: the transaction was rolled back because
 * another one holds the same rows, so the answer is "in flight, try later", never "failed".
 *
 * @example
 * ```ts
 * isConflict({ code: '40P01' }); // true
 * ```
 */
export function isConflict(error: unknown): boolean {
  return causes(error).some((cause) => {
    if (CONFLICT_CODES.has(field(cause, 'code')) || CONFLICT_ERRNOS.has(field(cause, 'errno'))) return true;
    if (
      PRISMA_CONFLICTS.has(field(cause, 'code')) ||
      PRISMA_CONFLICTS.has(field(cause, 'originalCode')) ||
      field(cause, 'kind') === 'TransactionWriteConflict'
    )
      return true;
    const sqliteCode = field(cause, 'errcode');
    return typeof sqliteCode === 'number' && isBusyCode(sqliteCode);
  });
}

// postgres.js's own codes for a connection it closed (node-postgres and mysql2 destroy theirs).
const LOST_CONNECTION = new Set<unknown>([
  'CONNECTION_CLOSED',
  'CONNECTION_DESTROYED',
  'CONNECTION_ENDED',
  'CONNECT_TIMEOUT',
]);

/**
 * Whether `error` says the connection is gone, so nothing more can be sent on it: the driver
 * closed it, its socket failed (a system error has a `syscall`), or the server ended the session
 * (a FATAL or PANIC, such as 57P01 when an admin or a failover terminates it).
 *
 * @example
 * ```ts
 * connectionLost({ code: 'ECONNRESET', syscall: 'read' }); // true
 * ```
 */
export function connectionLost(error: unknown): boolean {
  if (typeof error !== 'object' || error === null) return false;
  const syscall = field(error, 'syscall');
  const severity = field(error, 'severity');
  return (
    LOST_CONNECTION.has(field(error, 'code')) ||
    typeof syscall === 'string' ||
    severity === 'FATAL' ||
    severity === 'PANIC'
  );
}

/** The SQLSTATEs `error` and its causes carry (`code`; Prisma's driver adapter error: `originalCode`). */
const sqlStates = (error: unknown): unknown[] =>
  causes(error).flatMap((cause) => [field(cause, 'code'), field(cause, 'originalCode')]);

/**
 * Whether `error` (or one of its causes) is Postgres's in_failed_sql_transaction (25P02): a
 * statement of the work failed and the work caught it.
 *
 * @example
 * ```ts
 * aborted({ code: '25P02' }); // true
 * ```
 */
export const aborted = (error: unknown): boolean => sqlStates(error).includes('25P02');

/**
 * Whether `error` (or one of its causes: ORMs wrap the driver's error) is an integrity constraint
 * violation: Postgres's class 23, SQLite's SQLITE_CONSTRAINT. At COMMIT, a deferred constraint the
 * work's writes broke (a deferred foreign key on SQLite). The server answered, and rolled
 * everything back (SQLite: the ledger does): the outcome is known, and it is the work's.
 *
 * @example
 * ```ts
 * constraintBroken({ code: '23503' }); // true: foreign_key_violation
 * constraintBroken({ code: 'ERR_SQLITE_ERROR', errcode: 787 }); // true: SQLITE_CONSTRAINT_FOREIGNKEY
 * ```
 */
export function constraintBroken(error: unknown): boolean {
  return causes(error).some((cause) => {
    const code = field(cause, 'code');
    const sqlite = field(cause, 'errcode');
    return (
      [code, field(cause, 'originalCode')].some(
        (state) => typeof state === 'string' && /^23[0-9A-Z]{3}$/.test(state),
      ) ||
      (typeof sqlite === 'number' && (sqlite & 0xff) === SQLITE_CONSTRAINT) ||
      (typeof code === 'string' && code.startsWith('SQLITE_CONSTRAINT'))
    );
  });
}

/** The longest stretch of a database's message a log line carries. */
const MESSAGE_CHARS = 300;

/**
 * A setting whose name says its value is a secret (`password=`, `sslpassword=`, `pwd:`, a token,
 * a key), in a connection string's query or a driver's own words, and its value.
 */
const SECRET_SETTING = /\b([\w-]*(?:pass|pwd|secret|token|key)[\w-]*)(\s*[=:]\s*)("[^"]*"|'[^']*'|[^\s;,&]+)/gi;

/**
 * `text` without the secrets a driver's message can carry: the password of a connection string
 * (`postgres://shop:…@host`) and the value of a setting named like a secret. MySQL's refusal
 * "(using password: YES)" says whether a password was given, never which: its words are kept.
 */
function masked(text: string): string {
  return text
    .replace(/(\/\/[^/:@\s]*:)[^@\s]*@/g, '$1***@')
    .replace(
      SECRET_SETTING,
      (setting: string, name: string, between: string, value: string, at: number, all: string) =>
        /^(?:YES|NO)\)$/.test(value) && all.slice(0, at).endsWith('(using ') ? setting : `${name}${between}***`,
    );
}

/** The database's own code and message in `error` or the errors it wraps: the innermost that has both. */
function ownWords(error: unknown): { readonly code: string; readonly message: string } | undefined {
  let found: { code: string; message: string } | undefined;
  for (const cause of causes(error)) {
    // Prisma's driver adapter error keeps the database's under `original…`.
    const code = field(cause, 'originalCode') ?? field(cause, 'code');
    const errno = field(cause, 'errno');
    let message = field(cause, 'originalMessage') ?? field(cause, 'sqlMessage') ?? field(cause, 'message');
    // A connection refused on every address of a host name: Node's AggregateError says it in its first.
    const [first] = Array.isArray(field(cause, 'errors')) ? (field(cause, 'errors') as unknown[]) : [];
    if (message === '' && typeof first === 'object' && first !== null) message = field(first, 'message');
    if ((typeof code === 'string' || typeof code === 'number') && typeof message === 'string' && message !== '') {
      // MySQL's error number beside its code name; a system error's (negative) errno says nothing more.
      found = {
        code: typeof errno === 'number' && errno > 0 && errno !== code ? `${code} ${errno}` : String(code),
        message,
      };
    }
  }
  return found;
}

/**
 * What a store failure says in the handler's log line and to `onError`: the table, and the
 * database's own message and code (the innermost error that has both, through an ORM's wrapping:
 * never an ORM's message, which may quote the statement's values), masked of secrets (a
 * connection string's password, the value of a setting named like a secret: `password=`,
 * `sslpassword=`, a token, a key) and cut at 300 characters.
 *
 * @example
 * ```ts
 * storeFailure({ code: '42P01', message: 'relation "myr_webhook_ledger" does not exist' }, 'myr_webhook_ledger');
 * // 'the idempotency store failed on the SQL ledger table myr_webhook_ledger: relation "myr_webhook_ledger" does not exist (42P01)'
 * ```
 */
export function storeFailure(error: unknown, table: string): string {
  const words = ownWords(error);
  const said =
    words === undefined
      ? `a ${error instanceof Error ? error.name : typeof error} without a database code`
      : `${masked(words.message).slice(0, MESSAGE_CHARS)} (${masked(words.code)})`;
  return `the idempotency store failed on the SQL ledger table ${table}: ${said}`;
}

/**
 * Whether `error` says the COMMIT a run shared with other runs failed (SQLite, shared-commit.ts):
 * nothing of the run committed, and the failure may be another run's, so the run may go again.
 * Read on the error itself, never on a cause: the failure it wraps (a deferred constraint) may be
 * another run's.
 *
 * @example
 * ```ts
 * sharedCommitLost({ code: 'MYR_SQLITE_SHARED_COMMIT_FAILED' }); // true
 * ```
 */
export function sharedCommitLost(error: unknown): boolean {
  return typeof error === 'object' && error !== null && field(error, 'code') === SHARED_COMMIT_FAILED;
}
