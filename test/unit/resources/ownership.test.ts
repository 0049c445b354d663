/** Every row of the rule that decides whether a record found after an ambiguous create is this call's (src/resources/ownership.ts). */
import { describe, expect, it } from 'vitest';
import { CLOCK_TOLERANCE_MS, type FoundRecord, notOurs } from '../../../src/resources/ownership.js';

const START = Date.parse('2026-11-24T08:00:00.000Z');
const at = (offsetMs: number) => new Date(START + offsetMs).toISOString();
const record = (over: Partial<FoundRecord> = {}): FoundRecord => ({
  payment_id: 'PAY_1',
  amount: 300,
  status: 'PROCESSING',
  created_at: at(1_000),
  ...over,
});

const ROWS: [string, FoundRecord, number, ReturnType<typeof notOurs>][] = [
  ['open, same amount, created during the call', record(), 300, undefined],
  ['PENDING counts as open', record({ status: 'PENDING' }), 300, undefined],
  ['an amount with decimals', record({ amount: 149.9 }), 149.9, undefined],
  ['created just inside the clock tolerance', record({ created_at: at(-CLOCK_TOLERANCE_MS) }), 300, undefined],
  [
    'created just outside the clock tolerance',
    record({ created_at: at(-CLOCK_TOLERANCE_MS - 1) }),
    300,
    'created_before_call',
  ],
  ['created yesterday', record({ created_at: at(-86_400_000) }), 300, 'created_before_call'],
  ['created_at missing', record({ created_at: undefined }), 300, 'created_at_unknown'],
  ['created_at unreadable', record({ created_at: 'yesterday' }), 300, 'created_at_unknown'],
  ['another amount', record({ amount: 3000 }), 300, 'amount'],
  ['an amount off by a sen', record({ amount: 300.01 }), 300, 'amount'],
  ['a float sum is not the decimal', record({ amount: 0.1 + 0.2 }), 0.3, 'amount'],
  ...(['SUCCESS', 'FAILED', 'EXPIRED', 'CANCELLED', 'REFUNDED', 'SOMETHING_NEW'] as const).map(
    (status): [string, FoundRecord, number, ReturnType<typeof notOurs>] => [
      `status ${status}`,
      record({ status }),
      300,
      'status',
    ],
  ),
  ['a withdrawal id', record({ payment_id: 'WD_1' }), 300, 'withdrawal'],
  ['transaction_type WITHDRAWAL', record({ transaction_type: 'WITHDRAWAL' }), 300, 'withdrawal'],
  [
    'a paid withdrawal of the same amount from last week',
    record({ payment_id: 'WD_9', status: 'SUCCESS', created_at: at(-7 * 86_400_000) }),
    300,
    'withdrawal',
  ],
];

describe('ownership of a record found after an ambiguous payment create', () => {
  it.each(ROWS)('%s', (_label, found, amount, verdict) => {
    expect(notOurs(found, amount, START)).toBe(verdict);
  });
});
