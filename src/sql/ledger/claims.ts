/**
 * The rows a run claims: which row of the ledger's table a key or a payment's mark is, and the
 * claim of a key by one run (its row, until when it lasts, and the run's own random id).
 *
 * One table holds two kinds of row, told apart by the prefix of `ledger_key`: `k:<key>` is a
 * handled idempotency key, `m:<payment_id>` a payment's high-water mark (`mark_rank`). A row
 * lives until `expires_at` (ms since the epoch); an expired row is taken over as if absent and
 * removed by `prune`.
 *
 * @module
 */
import { createHash, getRandomValues } from 'node:crypto';

/**
 * Longest `ledger_key` stored as it is, and so the fewest characters the key column must hold;
 * longer ones (and those ending in a space) are stored as their SHA-256.
 */
export const MAX_KEY_LENGTH = 255;

function rowKey(prefix: 'k:' | 'm:', value: string): string {
  const key = prefix + value;
  // MySQL's utf8mb4_bin pads with spaces (`a` = `a `): a key ending in one is stored by its hash.
  return key.length <= MAX_KEY_LENGTH && !key.endsWith(' ')
    ? key
    : `h:${createHash('sha256').update(key).digest('hex')}`;
}

/** The row of an idempotency key. */
export const keyRow = (key: string): string => rowKey('k:', key);
/** The row of a payment's high-water mark. */
export const markRow = (paymentId: string): string => rowKey('m:', paymentId);

/** One run's claim of a key: the key's row, until when the record lasts, and the run's own id. */
export interface Claim {
  readonly row: string;
  readonly until: number;
  /**
   * Written into `claim_id` by every statement that claims or takes over the row, and the only
   * thing `done` compares: whether the row is still this run's. The expiry cannot say it: a
   * duplicate that claimed the key in the same ms (after the database rolled this run's claim
   * back under its work) writes the same one.
   */
  readonly id: number;
}

// Random words drawn a batch at a time: one call to the system's generator per 128 claims.
const words = new Uint32Array(256);
let drawn = words.length;

/**
 * The claim of `key` by a run that starts at `now`, in `row` (the key's own unless the run claims
 * in its payment's row: `claimRowOf` in claim-key.ts): its id a random integer of 53 bits (an
 * exact JS number, and a BIGINT on every database), so two runs of one key share it with odds of 2⁻⁵³.
 */
export function claimOf(key: string, now: number, ttlMs: number, row = keyRow(key)): Claim {
  if (drawn >= words.length) {
    getRandomValues(words);
    drawn = 0;
  }
  const high = (words[drawn] ?? 0) & 0x1f_ffff;
  const low = words[drawn + 1] ?? 0;
  drawn += 2;
  return { row, until: now + ttlMs, id: high * 0x1_0000_0000 + low };
}
