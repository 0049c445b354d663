/**
 * The payout outbox's SQL on Postgres: due rows are taken with `FOR UPDATE SKIP LOCKED`, so
 * workers in many processes each take rows the others are not holding.
 *
 * @module
 */
import { COLUMNS, numberedReleaseParams, type PayoutStatements } from '../../payouts/statement-shape.js';

/** Postgres's payout statements. */
export const payoutStatements: PayoutStatements = {
  schema: (t, bare) => [
    `CREATE TABLE IF NOT EXISTS ${t} (reference_id VARCHAR(100) PRIMARY KEY, state VARCHAR(16) NOT NULL, params TEXT NOT NULL, amount VARCHAR(32) NOT NULL, ` +
      'attempts INTEGER NOT NULL DEFAULT 0, payment_id VARCHAR(128), last_error VARCHAR(500), refusal TEXT, claim_id BIGINT, due_at BIGINT NOT NULL, ' +
      'staged_at BIGINT NOT NULL, sent_at BIGINT, settled_at BIGINT, requested_at BIGINT)',
    `CREATE INDEX IF NOT EXISTS ${bare}_due ON ${t} (due_at) WHERE state IN ('staged', 'sending', 'sent')`,
    `CREATE INDEX IF NOT EXISTS ${bare}_requested ON ${t} (requested_at)`,
    `CREATE TABLE IF NOT EXISTS ${t}_pace (id INTEGER PRIMARY KEY)`,
    `INSERT INTO ${t}_pace (id) VALUES (1) ON CONFLICT (id) DO NOTHING`,
  ],
  stage: {
    text: (t) =>
      `INSERT INTO ${t} (reference_id, state, params, amount, due_at, staged_at) VALUES ($1, 'staged', $2, $3, $4, $4) ON CONFLICT (reference_id) DO NOTHING`,
    params: (a) => [a.referenceId, a.params, a.amount, a.now],
  },
  due: {
    text: (t) =>
      `SELECT ${COLUMNS} FROM ${t} WHERE state IN ('staged', 'sending', 'sent') AND due_at <= $1 ORDER BY due_at LIMIT $2 FOR UPDATE SKIP LOCKED`,
    params: (a) => [a.now, a.limit],
  },
  claim: {
    text: (t) =>
      `UPDATE ${t} SET state = $2, claim_id = $3, due_at = $4, attempts = attempts + $5, requested_at = COALESCE($6::bigint, requested_at) WHERE reference_id = $1`,
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
