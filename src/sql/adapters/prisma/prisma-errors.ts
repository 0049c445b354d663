/**
 * Prisma's codes for "another transaction holds the rows": P2034 (an interactive transaction's
 * write conflict or deadlock), and the driver's own codes, which a raw statement's failure (P2010)
 * carries as text in `originalCode` (under `meta.driverAdapterError.cause`).
 *
 * @module
 */
export const PRISMA_CONFLICT_CODES: readonly string[] = ['P2034', '40001', '40P01', '55P03', '1213', '1205'];
