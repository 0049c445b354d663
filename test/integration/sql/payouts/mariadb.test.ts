/**
 * SqlPayouts on real MariaDB 10.11 through mysql2 (`fromMysql2`): sql/payouts/scenarios.ts.
 */
import type { RowDataPacket } from 'mysql2/promise';
import { fromMysql2 } from '../../../../src/sql/index.js';
import { mariadbForFile } from '../../../helpers/database-for-file.js';
import { payoutScenarios } from './scenarios.js';

const database = mariadbForFile({ connectionLimit: 10 }, (pool) =>
  pool.query('CREATE TABLE credits (reference_id VARCHAR(100) NOT NULL, kind VARCHAR(16) NOT NULL)'),
);

payoutScenarios('MariaDB (mysql2)', () => ({
  client: () => fromMysql2(database.pool),
  credit: async (tx, referenceId, kind) =>
    void (await tx.query('INSERT INTO credits (reference_id, kind) VALUES (?, ?)', [referenceId, kind])),
  credits: async (referenceId) => {
    const [rows] = await database.pool.query<RowDataPacket[]>('SELECT kind FROM credits WHERE reference_id = ?', [
      referenceId,
    ]);
    return rows.map((row) => String(row.kind));
  },
}));
