/**
 * Which build of `myr-gateway/sql` the ledger bench drives: the built package (dist/sql/index.js),
 * as a merchant's process runs it, built first when it is missing or older than a file of src/.
 * `BENCH_LEDGER_FROM=src` drives the source through tsx instead, whose transform (esbuild's
 * `keepNames` among it: an `Object.defineProperty` on every function a run makes) cost 4 to 14 µs
 * more of a callback's client CPU on Postgres (2026-11-30), which no merchant's process pays.
 *
 * @module
 */
import { pathToFileURL } from 'node:url';
import * as source from '../src/sql/index.js';
import { builtFile } from './built-package.js';

/** The entry's exports, as src declares them (dist is built from it). */
export type SqlEntry = typeof source;

/** Whether `entry` has every export of the source entry, each of the same kind. */
function isSqlEntry(entry: unknown): entry is SqlEntry {
  return (
    typeof entry === 'object' &&
    entry !== null &&
    Object.entries(source).every(([name, value]) => typeof Reflect.get(entry, name) === typeof value)
  );
}

/**
 * The SQL entry to bench, and which build it is (`'dist'` or `'src'`).
 *
 * @example
 * ```ts
 * const { sdk, from } = await sqlEntry();
 * const ledger = new sdk.SqlLedger(sdk.fromPg(pool));
 * ```
 */
export async function sqlEntry(): Promise<{ readonly sdk: SqlEntry; readonly from: 'dist' | 'src' }> {
  if (process.env.BENCH_LEDGER_FROM === 'src') return { sdk: source, from: 'src' };
  const file = builtFile('sql/index.js');
  const built: unknown = await import(pathToFileURL(file).href);
  if (!isSqlEntry(built)) throw new Error(`${file} does not export what src/sql/index.ts does: rebuild it`);
  return { sdk: built, from: 'dist' };
}
