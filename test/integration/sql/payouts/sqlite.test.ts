/**
 * SqlPayouts on SQLite (node:sqlite, a file in WAL mode): sql/payouts/scenarios.ts.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { afterAll } from 'vitest';
import { fromSqlite } from '../../../../src/sql/index.js';
import { payoutScenarios } from './scenarios.js';

const dir = mkdtempSync(join(tmpdir(), 'myr-payouts-'));
const file = join(dir, 'shop.db');
const setup = new DatabaseSync(file);
setup.exec('PRAGMA journal_mode = WAL; CREATE TABLE credits (reference_id TEXT NOT NULL, kind TEXT NOT NULL)');
afterAll(() => {
  setup.close();
  rmSync(dir, { recursive: true, force: true });
});

payoutScenarios('SQLite (node:sqlite)', () => ({
  client: () => fromSqlite(file),
  credit: async (tx, referenceId, kind) =>
    void tx.prepare('INSERT INTO credits (reference_id, kind) VALUES (?, ?)').run(referenceId, kind),
  credits: async (referenceId) =>
    setup
      .prepare('SELECT kind FROM credits WHERE reference_id = ?')
      .all(referenceId)
      .map((row) => String(row.kind)),
  raw: async (text, params) => void setup.prepare(text).run(...params),
}));
