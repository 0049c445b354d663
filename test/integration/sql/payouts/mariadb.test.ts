/**
 * SqlPayouts on real MariaDB 10.11: sql/payouts/scenarios.ts through mysql2 (`fromMysql2`), and the
 * stage and settle paths through Kysely's (MysqlDialect over mysql2's pool) and Drizzle's `tx`.
 */
import { sql as raw } from 'drizzle-orm';
import { drizzle } from 'drizzle-orm/mysql2';
import { Kysely, MysqlDialect, sql as kyselySql } from 'kysely';
import { createPool as createCallbackPool, type Pool as CallbackPool } from 'mysql2';
import type { RowDataPacket } from 'mysql2/promise';
import { afterAll } from 'vitest';
import { fromDrizzle, fromKysely, fromMysql2 } from '../../../../src/sql/index.js';
import { mariadbForFile } from '../../../helpers/database-for-file.js';
import { payoutScenarios, THROUGH_TX } from './scenarios.js';

const database = mariadbForFile({ connectionLimit: 10 }, (pool) =>
  pool.query('CREATE TABLE credits (reference_id VARCHAR(100) NOT NULL, kind VARCHAR(16) NOT NULL)'),
);

async function credits(referenceId: string): Promise<string[]> {
  const [rows] = await database.pool.query<RowDataPacket[]>('SELECT kind FROM credits WHERE reference_id = ?', [
    referenceId,
  ]);
  return rows.map((row) => String(row.kind));
}

payoutScenarios('MariaDB (mysql2)', () => ({
  client: () => fromMysql2(database.pool),
  credit: async (tx, referenceId, kind) =>
    void (await tx.query('INSERT INTO credits (reference_id, kind) VALUES (?, ?)', [referenceId, kind])),
  credits,
  raw: async (text, params) => void (await database.pool.query(text, [...params])),
}));

// Kysely's MysqlDialect takes mysql2's callback pool, not the promise one.
let callbackPool: CallbackPool | undefined;
const callbackPoolOf = () => (callbackPool ??= createCallbackPool({ ...database.server.options, connectionLimit: 10 }));
afterAll(async () => {
  await new Promise((resolve) => (callbackPool ? callbackPool.end(resolve) : resolve(undefined)));
});

payoutScenarios(
  'MariaDB (Kysely over mysql2)',
  () => ({
    client: () =>
      fromKysely(new Kysely<Record<string, never>>({ dialect: new MysqlDialect({ pool: callbackPoolOf() }) })),
    credit: async (tx, referenceId, kind) =>
      void (await kyselySql`INSERT INTO credits (reference_id, kind) VALUES (${referenceId}, ${kind})`.execute(tx)),
    credits,
  }),
  { only: THROUGH_TX },
);

payoutScenarios(
  'MariaDB (Drizzle over mysql2)',
  () => ({
    client: () => fromDrizzle(drizzle(database.pool)),
    credit: async (tx, referenceId, kind) =>
      void (await tx.execute(raw`INSERT INTO credits (reference_id, kind) VALUES (${referenceId}, ${kind})`)),
    credits,
  }),
  { only: THROUGH_TX },
);
