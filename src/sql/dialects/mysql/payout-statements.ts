/**
 * The payout outbox's SQL on MySQL 8 and MariaDB 10.6+: due rows are taken with
 * `FOR UPDATE SKIP LOCKED`, so workers in many processes each take rows the others are not
 * holding. References keep their case (`utf8mb4_bin`), as the service's do. Its tables' columns
 * are written once, for the DDL and for `ensureSchema`'s check.
 *
 * @module
 */
import { COLUMNS, WRITTEN, type PayoutStatements } from '../../payouts/statement-shape.js';
import { definitionOf, type TableColumn } from '../../schema-check.js';
import { columnFix, describeTable } from './table-check.js';

const VARCHAR = ['varchar', 'text', 'mediumtext', 'longtext'];
// TEXT holds 64 KiB, ample for a request's JSON; a VARCHAR holds less.
const TEXT = ['text', 'mediumtext', 'longtext'];
// claim_id is a 53-bit id and the *_at columns ms since the epoch: an INT cannot hold them.
const BIG = ['bigint'];

/** The payouts table's columns on MySQL. The reference compares bytes: MySQL's default collation would make `PAYOUT7781a` and `PAYOUT7781A` one payout. */
export const PAYOUT_COLUMNS: readonly TableColumn[] = [
  {
    name: 'reference_id',
    type: `VARCHAR(${WRITTEN.reference_id})`,
    binary: 'CHARACTER SET utf8mb4 COLLATE utf8mb4_bin',
    types: ['varchar'],
    chars: WRITTEN.reference_id,
    notNull: true,
    primaryKey: true,
  },
  { name: 'state', type: 'VARCHAR(16)', types: VARCHAR, chars: WRITTEN.state, notNull: true },
  { name: 'params', type: 'TEXT', types: TEXT, notNull: true },
  { name: 'amount', type: `VARCHAR(${WRITTEN.amount})`, types: VARCHAR, chars: WRITTEN.amount, notNull: true },
  { name: 'attempts', type: 'INT', types: ['int', 'bigint'], notNull: true, default: '0' },
  {
    name: 'payment_id',
    type: `VARCHAR(${WRITTEN.payment_id})`,
    types: VARCHAR,
    chars: WRITTEN.payment_id,
    notNull: false,
  },
  {
    name: 'last_error',
    type: `VARCHAR(${WRITTEN.last_error})`,
    types: VARCHAR,
    chars: WRITTEN.last_error,
    notNull: false,
  },
  { name: 'refusal', type: 'TEXT', types: TEXT, notNull: false },
  { name: 'claim_id', type: 'BIGINT', types: BIG, notNull: false },
  { name: 'due_at', type: 'BIGINT', types: BIG, notNull: true },
  { name: 'staged_at', type: 'BIGINT', types: BIG, notNull: true },
  { name: 'sent_at', type: 'BIGINT', types: BIG, notNull: false },
  { name: 'settled_at', type: 'BIGINT', types: BIG, notNull: false },
  { name: 'requested_at', type: 'BIGINT', types: BIG, notNull: false },
];

/** The pacing table's one column: its one row is the lock claims that send take turns on. */
export const PACE_COLUMNS: readonly TableColumn[] = [
  {
    name: 'id',
    type: 'INT',
    types: ['tinyint', 'smallint', 'mediumint', 'int', 'bigint'],
    notNull: true,
    primaryKey: true,
  },
];

const definitions = (columns: readonly TableColumn[]) =>
  columns.map((column) => `${column.name} ${definitionOf(column)}`).join(', ');

/** MySQL's and MariaDB's payout statements. */
export const payoutStatements: PayoutStatements = {
  schema: (t) => [
    `CREATE TABLE IF NOT EXISTS ${t} (${definitions(PAYOUT_COLUMNS)}, INDEX due_idx (state, due_at), INDEX requested_idx (requested_at)) ENGINE=InnoDB`,
    `CREATE TABLE IF NOT EXISTS ${t}_pace (${definitions(PACE_COLUMNS)}) ENGINE=InnoDB`,
    `INSERT IGNORE INTO ${t}_pace (id) VALUES (1)`,
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
      `INSERT IGNORE INTO ${t} (reference_id, state, params, amount, attempts, due_at, staged_at) VALUES (?, 'staged', ?, ?, 0, ?, ?)`,
    params: (a) => [a.referenceId, a.params, a.amount, a.now, a.now],
  },
  due: {
    text: (t) =>
      `SELECT ${COLUMNS} FROM ${t} WHERE state IN ('staged', 'sending', 'sent') AND due_at <= ? ORDER BY due_at LIMIT ? FOR UPDATE SKIP LOCKED`,
    params: (a) => [a.now, a.limit],
  },
  claim: {
    text: (t) =>
      `UPDATE ${t} SET state = ?, claim_id = ?, due_at = ?, attempts = attempts + ?, requested_at = COALESCE(?, requested_at) WHERE reference_id = ? AND state IN ('staged', 'sending', 'sent')`,
    params: (a) => [a.state, a.claimId, a.until, a.attempt, a.requestedAt, a.referenceId],
  },
  paceLock: { text: (t) => `SELECT id FROM ${t}_pace WHERE id = 1 FOR UPDATE`, params: () => [] },
  recent: {
    text: (t) =>
      `SELECT count(*) AS n, min(requested_at) AS oldest FROM ${t} WHERE requested_at > ? AND requested_at <= ?`,
    params: (a) => [a.since, a.until],
  },
  release: {
    text: (t) =>
      `UPDATE ${t} SET sent_at = IF(? = 'sent', ?, sent_at), settled_at = IF(? IN ('succeeded', 'failed', 'refused'), ?, settled_at), state = ?, due_at = ?, ` +
      'payment_id = COALESCE(?, payment_id), last_error = ?, refusal = ?, claim_id = NULL, requested_at = COALESCE(?, requested_at) ' +
      "WHERE reference_id = ? AND claim_id = ? AND state IN ('sending', 'sent')",
    params: (a) => [
      a.state,
      a.now,
      a.state,
      a.now,
      a.state,
      a.dueAt,
      a.paymentId,
      a.lastError,
      a.refusal,
      a.answeredAt,
      a.referenceId,
      a.claimId,
    ],
  },
  settle: {
    text: (t) =>
      `UPDATE ${t} SET state = ?, payment_id = ?, claim_id = NULL, settled_at = ? WHERE reference_id = ? AND state IN ('sending', 'sent')`,
    params: (a) => [a.state, a.paymentId, a.now, a.referenceId],
  },
  lock: {
    text: (t) => `SELECT ${COLUMNS} FROM ${t} WHERE reference_id = ? FOR UPDATE`,
    params: (a) => [a.referenceId],
  },
  read: { text: (t) => `SELECT ${COLUMNS} FROM ${t} WHERE reference_id = ?`, params: (a) => [a.referenceId] },
  park: {
    text: (t) => `UPDATE ${t} SET due_at = ?, last_error = ? WHERE reference_id = ?`,
    params: (a) => [a.dueAt, a.lastError, a.referenceId],
  },
};
