/**
 * SqlPayouts on real PostgreSQL through node-postgres (`fromPg`): payouts-scenarios.ts.
 */
import { fromPg } from '../../src/sql/index.js';
import { postgresForFile } from '../helpers/database-for-file.js';
import { payoutScenarios } from './payouts-scenarios.js';

const database = postgresForFile(10, (pool) => pool.query('CREATE TABLE credits (reference_id TEXT NOT NULL, kind TEXT NOT NULL)'));

payoutScenarios('PostgreSQL (node-postgres)', () => ({
  client: () => fromPg(database.pool),
  credit: async (tx, referenceId, kind) => void (await tx.query('INSERT INTO credits (reference_id, kind) VALUES ($1, $2)', [referenceId, kind])),
  credits: async (referenceId) => (await database.pool.query<{ kind: string }>('SELECT kind FROM credits WHERE reference_id = $1', [referenceId])).rows.map((row) => row.kind),
}));
