/**
 * `myr-gateway/sql`: the exactly-once callback ledger in the merchant's own database
 * ({@link SqlLedger}). The claim of a callback, the handler's writes through `tx` and the record
 * that it was handled commit in one transaction, or none of them does. Bring your own client:
 * node-postgres, postgres.js, mysql2, Kysely, Drizzle, Prisma, or the runtime's `node:sqlite`; this
 * subpath imports none of them.
 *
 * @module
 */
export { type SqlClient, type SqlDialect } from './sql-client.js';
export {
  SqlLedger,
  type EnsureSchemaOptions,
  type LedgerRunOptions,
  type PruneOptions,
  type SqlLedgerOptions,
} from './ledger/sql-ledger.js';
export {
  fromPg,
  type PgClientLike,
  type PgLedgerOptions,
  type PgNamedQuery,
  type PgClientOf,
  type PgPoolLike,
  type PgPromisedClient,
} from './adapters/pg/from-pg.js';
export {
  fromPostgresJs,
  type PostgresJsLike,
  type PostgresJsReservedLike,
  type PostgresJsTxOf,
} from './adapters/postgres-js/from-postgres-js.js';
export {
  fromPrisma,
  type PrismaLike,
  type PrismaTransactionLike,
  type PrismaTxOf,
} from './adapters/prisma/from-prisma.js';
export {
  fromMysql2,
  type Mysql2ConnectionLike,
  type Mysql2ConnectionOf,
  type Mysql2LedgerOptions,
  type Mysql2PoolLike,
} from './adapters/mysql2/from-mysql2.js';
export { fromDrizzle, type DrizzleLike, type DrizzleTxOf } from './adapters/drizzle/from-drizzle.js';
export {
  fromKysely,
  type KyselyLike,
  type KyselyTransactionLike,
  type KyselyTxOf,
} from './adapters/kysely/from-kysely.js';
export {
  fromSqlite,
  type FromSqliteOptions,
  type SqliteDatabaseLike,
  type SqliteValue,
} from './adapters/sqlite/from-sqlite.js';
export { SqlPayouts } from './payouts/payouts.js';
export type {
  PayoutInfo,
  PayoutRefusal,
  PayoutSettleResult,
  PayoutSettlement,
  SqlPayoutsOptions,
} from './payouts/options.js';
export type { PayoutWorker } from './payouts/worker.js';
export type { PayoutDrainReport, PayoutGateway, PayoutWorkerOptions } from './payouts/worker-options.js';
export type { PayoutState } from './payouts/statement-shape.js';
