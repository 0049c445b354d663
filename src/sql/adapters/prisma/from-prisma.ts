/**
 * The Prisma adapter (Prisma 7 with a driver adapter, Postgres or MySQL): each run is one
 * interactive transaction (`prisma.$transaction(async (tx) => …)`) held open until the ledger
 * decides, and the handler's `tx` is Prisma's own transaction client. The ledger's statements go
 * through `tx.$executeRawUnsafe` / `tx.$queryRawUnsafe`, parameterised; Prisma is never imported.
 *
 * @module
 */
import { ConfigurationError } from '../../../core/errors/base.js';
import type { SqlClient } from '../../sql-client.js';
import { ormDialect, rowsOf, type OrmDialect } from '../adapter-options.js';
import { heldTransactionClient, isolationFor, type RawQuery } from '../orm-transaction.js';
import { shownAs } from '../tx/secret-free.js';

/**
 * What the handler's Prisma `tx` shows of itself in a log or JSON: nothing of the client
 * underneath, whose driver adapter holds the database's connection string (with its password).
 */
class PrismaTx {}
const showTx = () => new PrismaTx();

/** The raw-SQL methods of a Prisma transaction client that the ledger sends its statements through. */
export interface PrismaTransactionLike {
  /** Runs a statement; answers the rows it changed. */
  $executeRawUnsafe(query: string, ...values: unknown[]): PromiseLike<number>;
  /** Runs a query; answers its rows. */
  $queryRawUnsafe(query: string, ...values: unknown[]): PromiseLike<unknown>;
}

/** A Prisma client (`new PrismaClient({ adapter })`), as the ledger drives it. */
export interface PrismaLike {
  /**
   * Prisma's interactive transaction: COMMIT when `fn` resolves, ROLLBACK when it throws. The
   * ledger asks for READ COMMITTED on MySQL (its claim reads the payment's mark without a lock)
   * and a `timeout` long enough for any handler (the ledger bounds the handler itself).
   */
  $transaction(
    fn: (tx: PrismaTransactionLike) => Promise<unknown>,
    options?: { timeout?: number; isolationLevel?: 'ReadCommitted' },
  ): PromiseLike<unknown>;
}

/** The transaction client type of a Prisma client: what `onEvent` receives as `tx`. */
export type PrismaTxOf<P> = P extends {
  /** Prisma's `$transaction(fn, options)`. */
  $transaction(fn: (tx: infer T) => never, options?: never): unknown;
}
  ? T
  : never;

// Prisma closes an interactive transaction after `timeout` (5 s by default); the ledger times the
// handler out itself (handlerTimeoutMs) and rolls back, so Prisma's bound only frees a connection
// whose handler never settles: 15 minutes, the longest a fleet claim lives too.
const TRANSACTION_TIMEOUT_MS = 15 * 60_000;

function prismaDialect(prisma: object): OrmDialect | undefined {
  // The generated client keeps its datasource's provider; the dialect argument covers the rest.
  const provider = '_activeProvider' in prisma ? prisma._activeProvider : undefined;
  return provider === 'postgresql' || provider === 'postgres' ? 'postgres' : provider === 'mysql' ? 'mysql' : undefined;
}

function rawQuery(tx: PrismaTransactionLike): RawQuery {
  return async (text, params) => {
    // Only the ledger's own reads want rows; everything else answers its count.
    if (text.startsWith('SELECT')) {
      const rows: unknown = await tx.$queryRawUnsafe(text, ...params);
      return { rows: rowsOf(rows), affected: 0 };
    }
    return { rows: [], affected: await tx.$executeRawUnsafe(text, ...params) };
  };
}

/**
 * The ledger over Prisma (a `PrismaClient` with a driver adapter, such as `@prisma/adapter-pg`
 * or `@prisma/adapter-mariadb`): each run is one interactive transaction, and the handler's `tx`
 * is Prisma's transaction client, so `tx.order.update(…)` commits with the ledger's record (a log
 * shows it as `PrismaTx {}`, never the driver adapter's password). The dialect is read from the
 * client (`postgresql` or `mysql`); give it as the second argument when that fails.
 *
 * @example
 * ```ts
 * import { PrismaPg } from '@prisma/adapter-pg';
 * import { PrismaClient } from '../../generated/prisma/client.js';
 *
 * const prisma = new PrismaClient({ adapter: new PrismaPg({ connectionString: process.env.DATABASE_URL }) });
 * const ledger = new SqlLedger(fromPrisma(prisma));
 * // onEvent: async (event, { tx }) => { await tx.order.update({ where: { id: event.signed.reference_id }, data: { status: 'paid' } }); }
 * ```
 */
export function fromPrisma<P extends PrismaLike>(prisma: P, dialect?: 'postgres' | 'mysql'): SqlClient<PrismaTxOf<P>> {
  if (typeof prisma !== 'object' || prisma === null || typeof prisma.$transaction !== 'function') {
    throw new ConfigurationError('fromPrisma takes a PrismaClient (new PrismaClient({ adapter }))', 'prisma');
  }
  const chosen = ormDialect(
    dialect,
    prismaDialect(prisma),
    "fromPrisma could not tell the client's database",
    'Prisma 7 with a Postgres or MySQL/MariaDB driver adapter',
  );
  return heldTransactionClient(
    chosen,
    // Prisma spells the dialect's READ COMMITTED 'ReadCommitted'.
    (body) =>
      prisma.$transaction(
        body,
        isolationFor(chosen)
          ? { timeout: TRANSACTION_TIMEOUT_MS, isolationLevel: 'ReadCommitted' }
          : { timeout: TRANSACTION_TIMEOUT_MS },
      ),
    // Prisma calls back with the transaction client whose type PrismaTxOf<P> names.
    (raw: PrismaTransactionLike) => ({ tx: shownAs(raw as PrismaTxOf<P> & object, showTx), query: rawQuery(raw) }),
  );
}
