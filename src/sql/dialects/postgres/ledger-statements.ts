/**
 * Every statement the ledger sends on Postgres, its text beside its parameters. Postgres numbers
 * its placeholders (`$1`…), so a parameter's place in the list is its number.
 *
 * @module
 */
import type { LedgerStatements } from '../dialect.js';
import { LEDGER_TX } from './session.js';

/**
 * The claim's expiry, `$2`, in a claim sent before BEGIN's answer (postgres.js pipelines them): a
 * value only inside the ledger's transaction, an error outside it (NULL breaks NOT NULL, '' is not
 * a number). So when BEGIN fails and the connection lives on (a cancel, a statement_timeout), the
 * claim fails too instead of committing on its own, which would record the callback done without
 * its work (nor does it extend a payment's mark). `current_setting` is not a constant: it is read
 * at execution, never folded in planning.
 */
const GUARDED_EXPIRY = `(CASE WHEN current_setting('${LEDGER_TX}', true) = 'on' THEN $2::bigint ELSE current_setting('${LEDGER_TX}', true)::bigint END)`;

/**
 * The ledger's statements on Postgres for `table` (checked; `bare` its last part). `guarded`: the
 * client sends the claim before BEGIN's answer; its claims then fail unless they run in the
 * ledger's transaction.
 */
export function postgresLedger(table: string, bare: string, guarded = false): LedgerStatements {
  const expiry = guarded ? GUARDED_EXPIRY : '$2::bigint';
  return {
    schema: [
      `CREATE TABLE IF NOT EXISTS ${table} (ledger_key VARCHAR(255) PRIMARY KEY, mark_rank SMALLINT, expires_at BIGINT NOT NULL, claim_id BIGINT)`,
      `CREATE INDEX IF NOT EXISTS ${bare}_expires ON ${table} (expires_at)`,
    ],
    probe: `SELECT claim_id FROM ${table} WHERE 1 = 0`,
    claim: {
      text:
        `INSERT INTO ${table} AS l (ledger_key, expires_at, claim_id) VALUES ($1, ${expiry}, $4::bigint) ON CONFLICT (ledger_key) ` +
        'DO UPDATE SET expires_at = EXCLUDED.expires_at, claim_id = EXCLUDED.claim_id WHERE l.expires_at <= $3',
      params: ({ claim, now }) => [claim.row, claim.until, now, claim.id],
    },
    // The mark's upsert waits for a transaction holding the row and then updates the row as
    // that one committed it, so the claim's test reads the mark as of the last COMMIT.
    claimOrdered: {
      text:
        `WITH mark AS (INSERT INTO ${table} AS m (ledger_key, mark_rank, expires_at) VALUES ($4::varchar, $6::smallint, ${expiry}) ON CONFLICT (ledger_key) DO UPDATE SET ` +
        'mark_rank = CASE WHEN m.expires_at <= $3::bigint THEN EXCLUDED.mark_rank ELSE GREATEST(m.mark_rank, EXCLUDED.mark_rank) END, expires_at = GREATEST(m.expires_at, EXCLUDED.expires_at) RETURNING mark_rank) ' +
        `INSERT INTO ${table} AS l (ledger_key, expires_at, claim_id) SELECT $1::varchar, ${expiry}, $7::bigint FROM mark WHERE mark.mark_rank <= $5::smallint ` +
        'ON CONFLICT (ledger_key) DO UPDATE SET expires_at = EXCLUDED.expires_at, claim_id = EXCLUDED.claim_id WHERE l.expires_at <= $3::bigint',
      params: ({ claim, now, mark, rank, markRank }) => [claim.row, claim.until, now, mark, rank, markRank, claim.id],
    },
    claimPath: { name: 'mark-in-claim' },
    readMark: {
      text: `SELECT mark_rank FROM ${table} WHERE ledger_key = $1 AND expires_at > $2 FOR SHARE`,
      params: ({ mark, now }) => [mark, now],
    },
    done: { text: `SELECT 1 AS held FROM ${table} WHERE ledger_key = $1 AND claim_id = $2`, params: ({ row, id }) => [row, id] },
    // The outer test is re-checked on a row a concurrent takeover just made live again (the
    // sub-select is not): without it prune deletes the done record that takeover committed.
    prune: {
      text: `DELETE FROM ${table} WHERE ledger_key IN (SELECT ledger_key FROM ${table} WHERE expires_at <= $1 LIMIT $2) AND expires_at <= $1`,
      params: ({ before, batch }) => [before, batch],
    },
  };
}
