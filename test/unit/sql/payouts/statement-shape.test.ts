/**
 * `numberedReleaseParams` (src/sql/payouts/statement-shape.ts): one list of the release's values
 * serves Postgres (`$n`) and SQLite (`?n`), so each dialect's release text must give every
 * column the value its number names. Read from the text: a wrong number writes one payout's
 * state, lease or pace time into another column.
 */
import { describe, expect, it } from 'vitest';
import { payoutStatements as postgres } from '../../../../src/sql/dialects/postgres/payout-statements.js';
import { payoutStatements as sqlite } from '../../../../src/sql/dialects/sqlite/payout-statements.js';
import { numberedReleaseParams } from '../../../../src/sql/payouts/statement-shape.js';

const values = {
  referenceId: 'PAYOUT1',
  claimId: 12,
  state: 'sent',
  dueAt: 34,
  paymentId: 'WD_1',
  lastError: 'E',
  refusal: '{"code":"X"}',
  now: 56,
  answeredAt: 78,
} as const;

/** Where the release text puts each value: a pattern around its numbered placeholder (`N`). */
const PLACES: [RegExp, keyof typeof values][] = [
  [/\bstate = [$?](\d+)/, 'state'],
  [/\bdue_at = [$?](\d+)/, 'dueAt'],
  [/COALESCE\([$?](\d+)(?:::\w+)?, payment_id\)/, 'paymentId'],
  [/\blast_error = [$?](\d+)/, 'lastError'],
  [/\brefusal = [$?](\d+)/, 'refusal'],
  [/COALESCE\([$?](\d+)(?:::\w+)?, requested_at\)/, 'answeredAt'],
  [/THEN [$?](\d+)(?:::\w+)? ELSE sent_at/, 'now'],
  [/WHERE reference_id = [$?](\d+)/, 'referenceId'],
  [/AND claim_id = [$?](\d+)/, 'claimId'],
];

describe.each([
  ['Postgres', postgres],
  ['SQLite', sqlite],
])('the release on %s', (_name, statements) => {
  it('binds numberedReleaseParams: every column gets the value its placeholder number names', () => {
    expect(statements.release.params).toBe(numberedReleaseParams);
    const text = statements.release.text('myr_payouts');
    const params = numberedReleaseParams(values);
    for (const [place, key] of PLACES) {
      const number = Number(place.exec(text)?.[1]);
      expect(params[number - 1], `${key} at ${place}`).toBe(values[key]);
    }
  });
});
