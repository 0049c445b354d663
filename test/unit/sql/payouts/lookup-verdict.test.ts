/**
 * src/sql/payouts/lookup-verdict.ts, every row: which status record settles an overdue payout,
 * which proves it was never made (an earlier withdrawal under its reference, A29), and which
 * proves nothing.
 */
import { describe, expect, it } from 'vitest';
import {
  CLOCK_ALLOWANCE_MS,
  earlierPayouts,
  lookupVerdict,
  type FoundRecord,
} from '../../../../src/sql/payouts/lookup-verdict.js';

const stagedAt = Date.parse('2026-11-29T10:00:00Z');
const unknownId = { referenceId: 'PAYOUT1', amount: '250.00', paymentId: undefined, stagedAt };
const knownId = { ...unknownId, paymentId: 'WD_1' };
const record = (more: Partial<FoundRecord> = {}): FoundRecord => ({
  reference_id: 'PAYOUT1',
  payment_id: 'WD_1',
  amount: 250,
  status: 'SUCCESS',
  created_at: '2026-11-29T10:00:02Z',
  ...more,
});
const at = (ms: number) => new Date(ms).toISOString();
const settle = (state: 'succeeded' | 'failed', status: string, paymentId = 'WD_1') => ({
  verdict: 'settle',
  state,
  status,
  paymentId,
});
const wait = { verdict: 'wait' };

describe('lookupVerdict', () => {
  it.each([
    ['no record (404, failed lookup)', unknownId, undefined, wait],
    ['its withdrawal, SUCCESS', unknownId, record(), settle('succeeded', 'SUCCESS')],
    ['its withdrawal, FAILED', knownId, record({ status: 'FAILED' }), settle('failed', 'FAILED')],
    ['its withdrawal, EXPIRED', knownId, record({ status: 'EXPIRED' }), settle('failed', 'EXPIRED')],
    ['its withdrawal, still PROCESSING', knownId, record({ status: 'PROCESSING' }), wait],
    ['another amount', knownId, record({ amount: 25 }), wait],
    ['another service id than the one its answer named', knownId, record({ payment_id: 'WD_2' }), wait],
    ['a deposit under the reference', unknownId, record({ payment_id: 'PAY_1' }), wait],
    ['another reference echoed', unknownId, record({ reference_id: 'PAYOUT2' }), wait],
    [
      'made just inside the clock allowance before staging',
      unknownId,
      record({ created_at: at(stagedAt - CLOCK_ALLOWANCE_MS) }),
      settle('succeeded', 'SUCCESS'),
    ],
    ['no readable created_at', unknownId, record({ created_at: 'yesterday' }), settle('succeeded', 'SUCCESS')],
    [
      'a date alone (no time to compare)',
      unknownId,
      record({ created_at: '2026-11-01' }),
      settle('succeeded', 'SUCCESS'),
    ],
    [
      'hours before staging, as a zone far east reads it',
      unknownId,
      record({ created_at: '2026-11-29T18:00:02+08:00' }),
      settle('succeeded', 'SUCCESS'),
    ],
    [
      "without a zone: UTC, whatever the process's zone (22 h before staging; read in Kuala Lumpur's zone, 30 h)",
      unknownId,
      record({ created_at: '2026-11-28T12:00:00' }),
      settle('succeeded', 'SUCCESS'),
    ],
    ...['0001-01-01T00:00:00Z', '1970-01-01T00:00:00Z', '1999-12-31T23:59:59Z'].map(
      (placeholder) =>
        [
          `a placeholder for no time (${placeholder}), not a withdrawal made then`,
          unknownId,
          record({ created_at: placeholder }),
          settle('succeeded', 'SUCCESS'),
        ] as const,
    ),
    [
      'its id known, made long before (its own clock far off): never refused',
      knownId,
      record({ created_at: at(stagedAt - 86_400_000) }),
      settle('succeeded', 'SUCCESS'),
    ],
  ] as const)('%s', (_, payout, found, expected) => {
    expect(lookupVerdict(payout, found)).toEqual(expected);
  });

  it.each([
    ['SUCCESS', CLOCK_ALLOWANCE_MS + 1],
    ['FAILED', 2 * 86_400_000],
    ['PROCESSING', 30 * 86_400_000],
  ])(
    'an earlier withdrawal (%s, made %i ms before staging) refuses a payout whose id is unknown, naming it',
    (status, before) => {
      const verdict = lookupVerdict(
        unknownId,
        record({ payment_id: 'WD_0', status, created_at: at(stagedAt - before) }),
      );
      expect(verdict).toMatchObject({ verdict: 'refuse', message: expect.stringContaining('earlier withdrawal WD_0') });
    },
  );
});

describe('earlierPayouts (a callback reads its signed completed_at)', () => {
  it.each([
    ['completed a day and a ms before staging, id unknown', unknownId, at(stagedAt - CLOCK_ALLOWANCE_MS - 1), true],
    ['completed in 2000, id unknown', unknownId, '2000-01-02T00:00:00Z', true],
    ['the epoch: a placeholder, no time', unknownId, '1970-01-01T00:00:00Z', false],
    ['year 1: a placeholder, no time', unknownId, '0001-01-01T00:00:00Z', false],
    [
      'completed a day before staging to the ms: within the allowance',
      unknownId,
      at(stagedAt - CLOCK_ALLOWANCE_MS),
      false,
    ],
    ['completed after staging', unknownId, at(stagedAt + 2000), false],
    ['a FAILED withdrawal (completed_at null)', unknownId, null, false],
    ['no value', unknownId, undefined, false],
    ['a date alone', unknownId, '2026-10-01', false],
    ['not a time', unknownId, 'yesterday', false],
    [
      'without a zone: UTC, so 8 h "early" in Kuala Lumpur is still within the day',
      unknownId,
      '2026-11-29T02:00:00',
      false,
    ],
    ['its id known (the answer named it): never', knownId, at(stagedAt - 30 * 86_400_000), false],
  ] as const)('%s: %s', (_, payout, completedAt, expected) => {
    expect(earlierPayouts(payout, completedAt)).toBe(expected);
  });
});
