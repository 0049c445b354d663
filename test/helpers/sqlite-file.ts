/**
 * A SQLite database in a file of its own, for tests of what runs on the SDK's SQLite adapter
 * (which refuses `:memory:`: each worker of a cluster would keep its own ledger). The folder is
 * the system's temporary one; the OS clears it.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';

/** A new, empty database in a file of its own. */
export function sqliteFile(): DatabaseSync {
  return new DatabaseSync(join(mkdtempSync(join(tmpdir(), 'myr-sqlite-test-')), 'db.sqlite'));
}
