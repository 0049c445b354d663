/**
 * The ledger in a SQLite file through the runtime's node:sqlite: every scenario of
 * sql/scenarios.ts that a single file can have (no server to stop).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { afterAll, beforeAll } from 'vitest';
import { fromSqlite } from '../../../../src/sql/index.js';
import { ledgerScenarios } from '../scenarios.js';

let dir: string;
let file: string;
let reader: DatabaseSync;

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'myr-sqlite-'));
  file = join(dir, 'shop.db');
  const setup = new DatabaseSync(file);
  setup.exec('PRAGMA journal_mode = WAL; CREATE TABLE fulfilments (payment_id TEXT NOT NULL)');
  setup.close();
  reader = new DatabaseSync(file, { readOnly: true });
});
afterAll(() => {
  reader?.close();
  rmSync(dir, { recursive: true, force: true });
});

ledgerScenarios('node:sqlite (a file path)', () => ({
  client: fromSqlite(file),
  fulfil: async (tx, payment) => void tx.prepare('INSERT INTO fulfilments (payment_id) VALUES (?)').run(payment),
  fulfilments: async (payment) =>
    Number(reader.prepare('SELECT count(*) AS n FROM fulfilments WHERE payment_id = ?').get(payment)?.n),
  closesOnTimeout: false,
}));
