/**
 * The payout outbox's SQL on MySQL 8 and MariaDB 10.6+: due rows are taken with
 * `FOR UPDATE SKIP LOCKED`, so workers in many processes each take rows the others are not
 * holding. References keep their case (`utf8mb4_bin`), as the service's do.
 *
 * @module
 */
import { COLUMNS, type PayoutStatements } from '../../payouts/statement-shape.js';

/** MySQL's and MariaDB's payout statements. */
export const payoutStatements: PayoutStatements = {
  schema: (t) => [
    `CREATE TABLE IF NOT EXISTS ${t} (reference_id VARCHAR(100) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NOT NULL PRIMARY KEY, state VARCHAR(16) NOT NULL, ` +
      'params TEXT NOT NULL, amount VARCHAR(32) NOT NULL, attempts INT NOT NULL DEFAULT 0, payment_id VARCHAR(128) NULL, last_error VARCHAR(500) NULL, ' +
      'refusal TEXT NULL, claim_id BIGINT NULL, due_at BIGINT NOT NULL, staged_at BIGINT NOT NULL, sent_at BIGINT NULL, settled_at BIGINT NULL, ' +
      'requested_at BIGINT NULL, INDEX due_idx (state, due_at), INDEX requested_idx (requested_at)) ENGINE=InnoDB',
    `CREATE TABLE IF NOT EXISTS ${t}_pace (id INT NOT NULL PRIMARY KEY) ENGINE=InnoDB`,
    `INSERT IGNORE INTO ${t}_pace (id) VALUES (1)`,
  ],
  stage: {
    text: (t) =>
      `INSERT IGNORE INTO ${t} (reference_id, state, params, amount, due_at, staged_at) VALUES (?, 'staged', ?, ?, ?, ?)`,
    params: (a) => [a.referenceId, a.params, a.amount, a.now, a.now],
  },
  due: {
    text: (t) =>
      `SELECT ${COLUMNS} FROM ${t} WHERE state IN ('staged', 'sending', 'sent') AND due_at <= ? ORDER BY due_at LIMIT ? FOR UPDATE SKIP LOCKED`,
    params: (a) => [a.now, a.limit],
  },
  claim: {
    text: (t) =>
      `UPDATE ${t} SET state = ?, claim_id = ?, due_at = ?, attempts = attempts + ?, requested_at = COALESCE(?, requested_at) WHERE reference_id = ?`,
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
