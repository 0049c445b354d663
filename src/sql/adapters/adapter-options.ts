/**
 * The options every adapter checks the same way, and the rows of a driver's answer: one rule for
 * `prepare` (node-postgres, postgres.js, mysql2) and for the dialect an ORM adapter runs on
 * (Kysely, Drizzle, Prisma), so a new adapter cannot check them its own way.
 *
 * @module
 */
import { ConfigurationError } from '../../core/errors/base.js';
import type { SqlDialect } from '../sql-client.js';

/** The dialects an ORM adapter drives (their Postgres and MySQL drivers). */
export type OrmDialect = Extract<SqlDialect, 'postgres' | 'mysql'>;

export const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null;

/** The rows of a driver's answer that are rows (objects); anything else is dropped. */
export const rowsOf = (value: unknown): readonly Record<string, unknown>[] =>
  Array.isArray(value) ? value.filter(isRecord) : [];

/**
 * The `prepare` option of an adapter's options object, checked: `true` (the default) or `false`;
 * anything else, or options that are not an object, is a ConfigurationError.
 *
 * @example
 * ```ts
 * preparing({ prepare: false }); // false
 * ```
 */
export function preparing(options: unknown): boolean {
  const prepare: unknown = isRecord(options) ? options.prepare : undefined;
  if (!isRecord(options) || (prepare !== undefined && typeof prepare !== 'boolean'))
    throw new ConfigurationError('prepare must be true or false', 'prepare');
  return prepare ?? true;
}

/**
 * The dialect an ORM adapter runs on: the one given, else the one read from the ORM's instance;
 * neither `'postgres'` nor `'mysql'` is a ConfigurationError that asks for it. `from` says which
 * adapter could not tell, `supports` what it drives.
 *
 * @example
 * ```ts
 * ormDialect(undefined, 'mysql', 'fromKysely could not tell the dialect of this Kysely instance'); // 'mysql'
 * ```
 */
export function ormDialect(
  given: unknown,
  read: unknown,
  from: string,
  supports = 'their node-postgres and mysql2 drivers',
): OrmDialect {
  const dialect = given ?? read;
  if (dialect === 'postgres' || dialect === 'mysql') return dialect;
  throw new ConfigurationError(
    `${from}: give the dialect as the second argument, 'postgres' or 'mysql' (the ledger supports ${supports})`,
    'dialect',
  );
}
