/**
 * The payout outbox's SQL on SQLite: one writer at a time (every transaction is `BEGIN
 * IMMEDIATE`), so a due row is taken by writing this worker's `claim_id` into it, with no row
 * locks to skip.
 *
 * @module
 */
import { COLUMNS, numberedReleaseParams, type PayoutStatements } from '../../payouts/statement-shape.js';

/** SQLite's payout statements. */
export const payoutStatements: PayoutStatements = {
  schema: (t, bare) => [
    `CREATE TABLE IF NOT EXISTS ${t} (reference_id TEXT PRIMARY KEY, state TEXT NOT NULL, params TEXT NOT NULL, amount TEXT NOT NULL, ` +
      'attempts INTEGER NOT NULL DEFAULT 0, payment_id TEXT, last_error TEXT, refusal TEXT, claim_id INTEGER, due_at INTEGER NOT NULL, ' +
      'staged_at INTEGER NOT NULL, sent_at INTEGER, settled_at INTEGER, requested_at INTEGER)',
    `CREATE INDEX IF NOT EXISTS ${bare}_due ON ${bare} (state, due_at)`,
    `CREATE INDEX IF NOT EXISTS ${bare}_requested ON ${bare} (requested_at)`,
    `CREATE TABLE IF NOT EXISTS ${t}_pace (id INTEGER PRIMARY KEY)`,
    `INSERT OR IGNORE INTO ${t}_pace (id) VALUES (1)`,
  ],
  stage: {
    text: (t) =>
      `INSERT INTO ${t} (reference_id, state, params, amount, due_at, staged_at) VALUES (?, 'staged', ?, ?, ?, ?) ON CONFLICT (reference_id) DO NOTHING`,
    params: (a) => [a.referenceId, a.params, a.amount, a.now, a.now],
  },
  due: {
    text: (t) =>
      `SELECT ${COLUMNS} FROM ${t} WHERE state IN ('staged', 'sending', 'sent') AND due_at <= ? ORDER BY due_at LIMIT ?`,
    params: (a) => [a.now, a.limit],
  },
  claim: {
    text: (t) =>
      `UPDATE ${t} SET state = ?, claim_id = ?, due_at = ?, attempts = attempts + ?, requested_at = COALESCE(?, requested_at) WHERE reference_id = ?`,
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
  park: {
    text: (t) => `UPDATE ${t} SET due_at = ?, last_error = ? WHERE reference_id = ?`,
    params: (a) => [a.dueAt, a.lastError, a.referenceId],
  },
};
