/**
 * SqlPayouts on real PostgreSQL: sql/payouts/scenarios.ts through node-postgres (`fromPg`) and
 * postgres.js (`fromPostgresJs`), and the stage and settle paths through Kysely's and Drizzle's `tx`.
 */
import { sql as raw } from 'drizzle-orm';
import { drizzle } from 'drizzle-orm/node-postgres';
import { Kysely, PostgresDialect, sql as kyselySql } from 'kysely';
import postgres from 'postgres';
import { afterAll } from 'vitest';
import { fromDrizzle, fromKysely, fromPg, fromPostgresJs } from '../../../../src/sql/index.js';
import { postgresForFile } from '../../../helpers/database-for-file.js';
import { payoutScenarios, THROUGH_TX } from './scenarios.js';

const database = postgresForFile(10, (pool) =>
  pool.query('CREATE TABLE credits (reference_id TEXT NOT NULL, kind TEXT NOT NULL)'),
);

/** A statement of the merchant's own, its `?` placeholders numbered as Postgres takes them. */
const merchantSql = async (text: string, params: readonly (string | number)[]) => {
  let n = 0;
  await database.pool.query(
    text.replaceAll('?', () => `$${++n}`),
    [...params],
  );
};

payoutScenarios('PostgreSQL (node-postgres)', () => ({
  client: () => fromPg(database.pool),
  credit: async (tx, referenceId, kind) =>
    void (await tx.query('INSERT INTO credits (reference_id, kind) VALUES ($1, $2)', [referenceId, kind])),
  credits: async (referenceId) =>
    (
      await database.pool.query<{ kind: string }>('SELECT kind FROM credits WHERE reference_id = $1', [referenceId])
    ).rows.map((row) => row.kind),
  raw: merchantSql,
}));

let postgresJs: postgres.Sql | undefined;
const postgresJsOf = () => (postgresJs ??= postgres(database.server.url, { max: 10, onnotice: () => undefined }));
afterAll(async () => {
  await postgresJs?.end({ timeout: 1 });
});

payoutScenarios('PostgreSQL (postgres.js)', () => ({
  client: () => fromPostgresJs(postgresJsOf()),
  credit: async (tx, referenceId, kind) =>
    void (await tx`INSERT INTO credits (reference_id, kind) VALUES (${referenceId}, ${kind})`),
  credits: async (referenceId) =>
    (
      await database.pool.query<{ kind: string }>('SELECT kind FROM credits WHERE reference_id = $1', [referenceId])
    ).rows.map((row) => row.kind),
  raw: merchantSql,
}));

payoutScenarios(
  'PostgreSQL (Kysely)',
  () => ({
    client: () =>
      fromKysely(new Kysely<Record<string, never>>({ dialect: new PostgresDialect({ pool: database.pool }) })),
    credit: async (tx, referenceId, kind) =>
      void (await kyselySql`INSERT INTO credits (reference_id, kind) VALUES (${referenceId}, ${kind})`.execute(tx)),
    credits: async (referenceId) =>
      (
        await database.pool.query<{ kind: string }>('SELECT kind FROM credits WHERE reference_id = $1', [referenceId])
      ).rows.map((row) => row.kind),
  }),
  { only: THROUGH_TX },
);

payoutScenarios(
  'PostgreSQL (Drizzle over node-postgres)',
  () => ({
    client: () => fromDrizzle(drizzle(database.pool)),
    credit: async (tx, referenceId, kind) =>
      void (await tx.execute(raw`INSERT INTO credits (reference_id, kind) VALUES (${referenceId}, ${kind})`)),
    credits: async (referenceId) =>
      (
        await database.pool.query<{ kind: string }>('SELECT kind FROM credits WHERE reference_id = $1', [referenceId])
      ).rows.map((row) => row.kind),
  }),
  { only: THROUGH_TX },
);
