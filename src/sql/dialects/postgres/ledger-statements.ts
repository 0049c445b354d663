/**
 * Every statement the ledger sends on Postgres, its text beside its parameters. Postgres numbers
 * its placeholders (`$1`…), so a parameter's place in the list is its number.
 *
 * @module
 */
import type { LedgerStatements } from '../dialect.js';
import { postgresSchema } from './ledger-schema.js';
import { LEDGER_TX } from './session.js';

/**
 * An expiry (the claim's `$2`, the payment row's `$9`, `claimPayment`'s `$4`) in a claim sent
 * before BEGIN's answer (postgres.js pipelines them): a value only inside the ledger's
 * transaction, an error outside it (NULL breaks NOT NULL, '' is not a number). So when BEGIN fails
 * and the connection lives on (a cancel, a statement_timeout), the claim fails too instead of
 * committing on its own, which would record the callback done without its work (nor does it write
 * the payment's row: its expiry is guarded the same way, and the row proposed is checked before a
 * conflict turns the insert into an update). `current_setting` is not a constant: it is read at
 * execution, never folded in planning.
 */
const guarded = (param: string) =>
  `(CASE WHEN current_setting('${LEDGER_TX}', true) = 'on' THEN ${param}::bigint ELSE current_setting('${LEDGER_TX}', true)::bigint END)`;

/**
 * The ledger's statements on Postgres for `table` (checked; `bare` its last part). `guarded`: the
 * client sends the claim before BEGIN's answer; its claims then fail unless they run in the
 * ledger's transaction (`sentBeforeBegin`).
 */
export function postgresLedger(table: string, bare: string, sentBeforeBegin = false): LedgerStatements {
  const expiry = sentBeforeBegin ? guarded('$2') : '$2::bigint';
  const paymentKept = (param: string) => (sentBeforeBegin ? guarded(param) : `${param}::bigint`);
  const keptUntil = paymentKept('$9');
  return {
    ...postgresSchema(table, bare),
    claim: {
      text:
        `INSERT INTO ${table} AS l (ledger_key, handled_statuses, expires_at, claim_id) VALUES ($1, 0, ${expiry}, $4::bigint) ON CONFLICT (ledger_key) ` +
        'DO UPDATE SET expires_at = EXCLUDED.expires_at, claim_id = EXCLUDED.claim_id WHERE l.expires_at <= $3',
      params: ({ claim, now }) => [claim.row, claim.until, now, claim.id],
    },
    // The payment's upsert waits for a transaction holding its row and then updates the row as
    // that one committed it, so the claim's test reads it as of the last COMMIT. A status whose
    // bit is set already updates nothing (the row stays locked all the same) and returns no row:
    // the key is not claimed.
    claimOrdered: {
      text:
        `WITH mark AS (INSERT INTO ${table} AS m (ledger_key, mark_rank, handled_statuses, expires_at) VALUES ($4::varchar, $6::smallint, $8::smallint, ${keptUntil}) ` +
        'ON CONFLICT (ledger_key) DO UPDATE SET mark_rank = GREATEST(m.mark_rank, EXCLUDED.mark_rank), handled_statuses = m.handled_statuses | EXCLUDED.handled_statuses ' +
        'WHERE (m.handled_statuses & EXCLUDED.handled_statuses) = 0 RETURNING mark_rank) ' +
        `INSERT INTO ${table} AS l (ledger_key, handled_statuses, expires_at, claim_id) SELECT $1::varchar, 0, ${expiry}, $7::bigint FROM mark WHERE mark.mark_rank <= $5::smallint ` +
        'ON CONFLICT (ledger_key) DO UPDATE SET expires_at = EXCLUDED.expires_at, claim_id = EXCLUDED.claim_id WHERE l.expires_at <= $3::bigint',
      params: ({ claim, now, mark, rank, markRank, handled, keptUntil: kept }) => [
        claim.row,
        claim.until,
        now,
        mark,
        rank,
        markRank,
        claim.id,
        handled,
        kept,
      ],
    },
    // The row's lock orders the payment's callbacks as `claimOrdered`'s does; a status whose bit is
    // set, or one a later status superseded, updates nothing (the row stays locked all the same).
    claimPath: {
      name: 'mark-in-claim',
      claimPayment: {
        text:
          `INSERT INTO ${table} AS m (ledger_key, mark_rank, handled_statuses, expires_at, claim_id) VALUES ($1::varchar, $2::smallint, $3::smallint, ${paymentKept('$4')}, $5::bigint) ` +
          'ON CONFLICT (ledger_key) DO UPDATE SET mark_rank = GREATEST(m.mark_rank, EXCLUDED.mark_rank), handled_statuses = m.handled_statuses | EXCLUDED.handled_statuses, claim_id = EXCLUDED.claim_id ' +
          'WHERE (m.handled_statuses & EXCLUDED.handled_statuses) = 0 AND COALESCE(m.mark_rank, EXCLUDED.mark_rank) <= $6::smallint',
        params: ({ claim, mark, markRank, handled, keptUntil: kept, rank }) => [
          mark,
          markRank,
          handled,
          kept,
          claim.id,
          rank,
        ],
      },
    },
    readMark: {
      text: `SELECT mark_rank, handled_statuses FROM ${table} WHERE ledger_key = $1 FOR SHARE`,
      params: ({ mark }) => [mark],
    },
    done: {
      text: `SELECT 1 AS held FROM ${table} WHERE ledger_key = $1 AND claim_id = $2`,
      params: ({ row, id }) => [row, id],
    },
    // The outer test is re-checked on a row a concurrent takeover just made live again (the
    // sub-select is not): without it prune deletes the done record that takeover committed.
    prune: {
      text: `DELETE FROM ${table} WHERE ledger_key IN (SELECT ledger_key FROM ${table} WHERE expires_at <= $1 LIMIT $2) AND expires_at <= $1`,
      params: ({ before, batch }) => [before, batch],
    },
  };
}
