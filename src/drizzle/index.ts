/**
 * `myr-gateway/drizzle`: the SQL ledger's table for the merchant's Drizzle schema, so that
 * `drizzle-kit push` and `drizzle-kit generate` keep it (a table missing from the schema is
 * dropped by push). Needs `drizzle-orm` (an optional peer dependency: only this subpath loads it).
 *
 * @module
 */
export { mysqlLedgerTable, pgLedgerTable, sqliteLedgerTable } from './ledger-table.js';
