/**
 * The payout outbox's SQL on Postgres: due rows are taken with `FOR UPDATE SKIP LOCKED`, so
 * workers in many processes each take rows the others are not holding. Its tables' columns are
 * written once, for the DDL and for `ensureSchema`'s check.
 *
 * @module
 */
import { COLUMNS, numberedReleaseParams, WRITTEN, type PayoutStatements } from '../../payouts/statement-shape.js';
import { definitionOf, type TableColumn } from '../../schema-check.js';
import { columnFix, describeTable, DETERMINISTIC } from './table-check.js';

const TEXT = ['character varying', 'text'];
// claim_id is a 53-bit id and the *_at columns ms since the epoch: an INTEGER cannot hold them.
const BIG = ['bigint'];

/** The payouts table's columns on Postgres. */
export const PAYOUT_COLUMNS: readonly TableColumn[] = [
  {
    name: 'reference_id',
    type: `VARCHAR(${WRITTEN.reference_id})`,
    types: TEXT,
    chars: WRITTEN.reference_id,
    notNull: false,
    primaryKey: true,
    // A non-deterministic collation would make PAYOUTab1 and PAYOUTAB1 one payout.
    exact: DETERMINISTIC,
  },
  { name: 'state', type: 'VARCHAR(16)', types: TEXT, chars: WRITTEN.state, notNull: true },
  { name: 'params', type: 'TEXT', types: TEXT, chars: Infinity, notNull: true },
  { name: 'amount', type: `VARCHAR(${WRITTEN.amount})`, types: TEXT, chars: WRITTEN.amount, notNull: true },
  { name: 'attempts', type: 'INTEGER', types: ['integer', 'bigint'], notNull: true, default: '0' },
  {
    name: 'payment_id',
    type: `VARCHAR(${WRITTEN.payment_id})`,
    types: TEXT,
    chars: WRITTEN.payment_id,
    notNull: false,
  },
  {
    name: 'last_error',
    type: `VARCHAR(${WRITTEN.last_error})`,
    types: TEXT,
    chars: WRITTEN.last_error,
    notNull: false,
  },
  { name: 'refusal', type: 'TEXT', types: TEXT, chars: Infinity, notNull: false },
  { name: 'claim_id', type: 'BIGINT', types: BIG, notNull: false },
  { name: 'due_at', type: 'BIGINT', types: BIG, notNull: true },
  { name: 'staged_at', type: 'BIGINT', types: BIG, notNull: true },
  { name: 'sent_at', type: 'BIGINT', types: BIG, notNull: false },
  { name: 'settled_at', type: 'BIGINT', types: BIG, notNull: false },
  { name: 'requested_at', type: 'BIGINT', types: BIG, notNull: false },
];

/** The pacing table's one column: its one row is the lock claims that send take turns on. */
export const PACE_COLUMNS: readonly TableColumn[] = [
  { name: 'id', type: 'INTEGER', types: ['smallint', 'integer', 'bigint'], notNull: false, primaryKey: true },
];

const definitions = (columns: readonly TableColumn[]) =>
  columns.map((column) => `${column.name} ${definitionOf(column)}`).join(', ');

/** Postgres's payout statements. */
export const payoutStatements: PayoutStatements = {
  schema: (t, bare) => [
    `CREATE TABLE IF NOT EXISTS ${t} (${definitions(PAYOUT_COLUMNS)})`,
    `CREATE INDEX IF NOT EXISTS ${bare}_due ON ${t} (due_at) WHERE state IN ('staged', 'sending', 'sent')`,
    `CREATE INDEX IF NOT EXISTS ${bare}_requested ON ${t} (requested_at)`,
    `CREATE TABLE IF NOT EXISTS ${t}_pace (${definitions(PACE_COLUMNS)})`,
    `INSERT INTO ${t}_pace (id) VALUES (1) ON CONFLICT (id) DO NOTHING`,
  ],
  tables: (t) => [
    { name: t, columns: PAYOUT_COLUMNS, describe: describeTable(t), fixColumn: columnFix(t) },
    {
      name: `${t}_pace`,
      columns: PACE_COLUMNS,
      describe: describeTable(`${t}_pace`),
      fixColumn: columnFix(`${t}_pace`),
    },
  ],
  stage: {
    text: (t) =>
      `INSERT INTO ${t} (reference_id, state, params, amount, attempts, due_at, staged_at) VALUES ($1, 'staged', $2, $3, 0, $4, $4) ON CONFLICT (reference_id) DO NOTHING`,
    params: (a) => [a.referenceId, a.params, a.amount, a.now],
  },
  due: {
    text: (t) =>
      `SELECT ${COLUMNS} FROM ${t} WHERE state IN ('staged', 'sending', 'sent') AND due_at <= $1 ORDER BY due_at LIMIT $2 FOR UPDATE SKIP LOCKED`,
    params: (a) => [a.now, a.limit],
  },
  claim: {
    text: (t) =>
      `UPDATE ${t} SET state = $2, claim_id = $3, due_at = $4, attempts = attempts + $5, requested_at = COALESCE($6::bigint, requested_at) WHERE reference_id = $1 AND state IN ('staged', 'sending', 'sent')`,
    params: (a) => [a.referenceId, a.state, a.claimId, a.until, a.attempt, a.requestedAt],
  },
  paceLock: { text: (t) => `SELECT id FROM ${t}_pace WHERE id = 1 FOR UPDATE`, params: () => [] },
  recent: {
    text: (t) =>
      `SELECT count(*) AS n, min(requested_at) AS oldest FROM ${t} WHERE requested_at > $1 AND requested_at <= $2`,
    params: (a) => [a.since, a.until],
  },
  release: {
    text: (t) =>
      `UPDATE ${t} SET state = $3::varchar, due_at = $4, payment_id = COALESCE($5, payment_id), last_error = $6, refusal = $7, claim_id = NULL, requested_at = COALESCE($9::bigint, requested_at), ` +
      `sent_at = CASE WHEN $3::varchar = 'sent' THEN $8::bigint ELSE sent_at END, settled_at = CASE WHEN $3::varchar IN ('succeeded', 'failed', 'refused') THEN $8::bigint ELSE settled_at END ` +
      "WHERE reference_id = $1 AND claim_id = $2 AND state IN ('sending', 'sent')",
    params: numberedReleaseParams,
  },
  settle: {
    text: (t) =>
      `UPDATE ${t} SET state = $2, payment_id = $3, claim_id = NULL, settled_at = $4 WHERE reference_id = $1 AND state IN ('sending', 'sent')`,
    params: (a) => [a.referenceId, a.state, a.paymentId, a.now],
  },
  lock: {
    text: (t) => `SELECT ${COLUMNS} FROM ${t} WHERE reference_id = $1 FOR UPDATE`,
    params: (a) => [a.referenceId],
  },
  read: { text: (t) => `SELECT ${COLUMNS} FROM ${t} WHERE reference_id = $1`, params: (a) => [a.referenceId] },
  park: {
    text: (t) => `UPDATE ${t} SET due_at = $2, last_error = $3 WHERE reference_id = $1`,
    params: (a) => [a.referenceId, a.dueAt, a.lastError],
  },
};
