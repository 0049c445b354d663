/**
 * The payout outbox's SQL on SQLite: one writer at a time (every transaction is `BEGIN
 * IMMEDIATE`), so a due row is taken by writing this worker's `claim_id` into it, with no row
 * locks to skip. Its tables' columns are written once, for the DDL and for `ensureSchema`'s check.
 *
 * @module
 */
import { COLUMNS, numberedReleaseParams, type PayoutStatements } from '../../payouts/statement-shape.js';
import { definitionOf, type TableColumn } from '../../schema-check.js';
import { columnFix, describeTable, textKey, WHOLE } from './table-check.js';

// SQLite holds text of any length under a TEXT type, so no column's length is checked.
const TEXT = ['text', 'varchar'];

/** The payouts table's columns on SQLite. */
export const PAYOUT_COLUMNS: readonly TableColumn[] = [
  // A table made without NOT NULL on it still passes: a NULL key is set aside by the worker.
  textKey('reference_id', TEXT),
  { name: 'state', type: 'TEXT', types: TEXT, notNull: true },
  { name: 'params', type: 'TEXT', types: TEXT, notNull: true },
  { name: 'amount', type: 'TEXT', types: TEXT, notNull: true },
  { name: 'attempts', type: 'INTEGER', types: WHOLE, notNull: true, default: '0' },
  { name: 'payment_id', type: 'TEXT', types: TEXT, notNull: false },
  { name: 'last_error', type: 'TEXT', types: TEXT, notNull: false },
  { name: 'refusal', type: 'TEXT', types: TEXT, notNull: false },
  { name: 'claim_id', type: 'INTEGER', types: WHOLE, notNull: false },
  { name: 'due_at', type: 'INTEGER', types: WHOLE, notNull: true },
  { name: 'staged_at', type: 'INTEGER', types: WHOLE, notNull: true },
  { name: 'sent_at', type: 'INTEGER', types: WHOLE, notNull: false },
  { name: 'settled_at', type: 'INTEGER', types: WHOLE, notNull: false },
  { name: 'requested_at', type: 'INTEGER', types: WHOLE, notNull: false },
];

/** The pacing table's one column (read for the statements' shape: SQLite's one writer paces already). */
export const PACE_COLUMNS: readonly TableColumn[] = [
  { name: 'id', type: 'INTEGER', types: WHOLE, notNull: false, primaryKey: true },
];

const create = (table: string, columns: readonly TableColumn[]) =>
  `CREATE TABLE IF NOT EXISTS ${table} (${columns.map((column) => `${column.name} ${definitionOf(column)}`).join(', ')})`;

/** SQLite's payout statements. */
export const payoutStatements: PayoutStatements = {
  schema: (t, bare) => [
    create(t, PAYOUT_COLUMNS),
    `CREATE INDEX IF NOT EXISTS ${bare}_due ON ${bare} (state, due_at)`,
    `CREATE INDEX IF NOT EXISTS ${bare}_requested ON ${bare} (requested_at)`,
    create(`${t}_pace`, PACE_COLUMNS),
    `INSERT OR IGNORE INTO ${t}_pace (id) VALUES (1)`,
  ],
  tables: (t, bare) => [
    {
      name: t,
      columns: PAYOUT_COLUMNS,
      describe: describeTable(t, bare),
      fixColumn: columnFix(t, create(t, PAYOUT_COLUMNS)),
    },
    {
      name: `${t}_pace`,
      columns: PACE_COLUMNS,
      describe: describeTable(`${t}_pace`, `${bare}_pace`),
      fixColumn: columnFix(`${t}_pace`, create(`${t}_pace`, PACE_COLUMNS)),
    },
  ],
  stage: {
    text: (t) =>
      `INSERT INTO ${t} (reference_id, state, params, amount, attempts, due_at, staged_at) VALUES (?, 'staged', ?, ?, 0, ?, ?) ON CONFLICT (reference_id) DO NOTHING`,
    params: (a) => [a.referenceId, a.params, a.amount, a.now, a.now],
  },
  due: {
    text: (t) =>
      `SELECT ${COLUMNS} FROM ${t} WHERE state IN ('staged', 'sending', 'sent') AND due_at <= ? ORDER BY due_at LIMIT ?`,
    params: (a) => [a.now, a.limit],
  },
  claim: {
    text: (t) =>
      `UPDATE ${t} SET state = ?, claim_id = ?, due_at = ?, attempts = attempts + ?, requested_at = COALESCE(?, requested_at) WHERE reference_id = ? AND state IN ('staged', 'sending', 'sent')`,
    params: (a) => [a.state, a.claimId, a.until, a.attempt, a.requestedAt, a.referenceId],
  },
  // The transaction holds SQLite's write lock already: the row is read for the same statement shape.
  paceLock: { text: (t) => `SELECT id FROM ${t}_pace WHERE id = 1`, params: () => [] },
  recent: {
    text: (t) =>
      `SELECT count(*) AS n, min(requested_at) AS oldest FROM ${t} WHERE requested_at > ? AND requested_at <= ?`,
    params: (a) => [a.since, a.until],
  },
  release: {
    text: (t) =>
      `UPDATE ${t} SET sent_at = CASE WHEN ?3 = 'sent' THEN ?8 ELSE sent_at END, settled_at = CASE WHEN ?3 IN ('succeeded', 'failed', 'refused') THEN ?8 ELSE settled_at END, ` +
      'state = ?3, due_at = ?4, payment_id = COALESCE(?5, payment_id), last_error = ?6, refusal = ?7, claim_id = NULL, requested_at = COALESCE(?9, requested_at) ' +
      "WHERE reference_id = ?1 AND claim_id = ?2 AND state IN ('sending', 'sent')",
    params: numberedReleaseParams,
  },
  settle: {
    text: (t) =>
      `UPDATE ${t} SET state = ?, payment_id = ?, claim_id = NULL, settled_at = ? WHERE reference_id = ? AND state IN ('sending', 'sent')`,
    params: (a) => [a.state, a.paymentId, a.now, a.referenceId],
  },
  lock: { text: (t) => `SELECT ${COLUMNS} FROM ${t} WHERE reference_id = ?`, params: (a) => [a.referenceId] },
  read: { text: (t) => `SELECT ${COLUMNS} FROM ${t} WHERE reference_id = ?`, params: (a) => [a.referenceId] },
  // A TEXT primary key holds NULL or a blob on SQLite when written by hand: IS names those too.
  park: {
    text: (t) => `UPDATE ${t} SET due_at = ?, last_error = ? WHERE reference_id IS ?`,
    params: (a) => [a.dueAt, a.lastError, a.referenceId],
  },
};
