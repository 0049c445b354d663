/**
 * fromPg takes a node-postgres Pool. A single pg.Client also has connect(), but its connect()
 * opens the connection and answers nothing: accepted, every callback then failed at its first
 * step (503, the gateway gives up after its three deliveries). The types refuse it; a JavaScript
 * caller is refused before any network call too.
 * Real PostgreSQL 15, through the public fromPg, SqlLedger and runOnce.
 */
import pg from 'pg';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { ConfigurationError } from '../../../../src/core/errors/base.js';
import { SqlLedger, fromPg } from '../../../../src/sql/index.js';
import { runOnce } from '../../../../src/webhooks/index.js';
import { postgresForFile } from '../../../helpers/database-for-file.js';

const db = postgresForFile(2);
let client: pg.Client;

beforeAll(() => {
  client = new pg.Client({ connectionString: db.server.url });
});
afterAll(async () => {
  await client?.end().catch(() => undefined);
});

it('a single pg.Client is refused with a ConfigurationError naming the Pool; a Pool is accepted and handles the callback', async () => {
  // @ts-expect-error: the types refuse a Client; a JavaScript caller is not stopped by them
  expect(() => fromPg(client)).toThrow(ConfigurationError);
  // @ts-expect-error: as above
  expect(() => fromPg(client)).toThrow(/Pool/);
  const ledger = new SqlLedger(fromPg(db.pool), { table: 'ledger_pg_client_refused' });
  await ledger.ensureSchema();
  expect((await runOnce(ledger, 'payment:PAY_1:SUCCESS', () => 'done')).outcome).toBe('processed');
}, 60_000);
