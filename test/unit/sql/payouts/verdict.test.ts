/**
 * src/sql/payouts/verdict.ts, every row: which failure of a payout's request refuses it for good,
 * which proves it is at the service, which certainly left it unsent, and which leaves it unknown
 * (asked again with the same reference, never sent as new).
 */
import { describe, expect, it } from 'vitest';
import { payoutVerdict, type PayoutVerdict } from '../../../../src/sql/payouts/verdict.js';

const rows: [string, unknown, boolean, PayoutVerdict][] = [
  ['INVALID_BANK_CODE 400', { code: 'INVALID_BANK_CODE', status: 400 }, true, 'refused'],
  [
    'INVALID_BANK_CODE 400 on a resend (the first never arrived)',
    { code: 'INVALID_BANK_CODE', status: 400 },
    false,
    'refused',
  ],
  ['INVALID_AMOUNT 400', { code: 'INVALID_AMOUNT', status: 400 }, true, 'refused'],
  ['VALIDATION_ERROR 422', { code: 'VALIDATION_ERROR', status: 422 }, true, 'refused'],
  ['VALIDATION_ERROR before sending (no status)', { code: 'VALIDATION_ERROR' }, true, 'refused'],
  ['DUPLICATE_REFERENCE on the very first request', { code: 'DUPLICATE_REFERENCE', status: 409 }, true, 'refused'],
  [
    'DUPLICATE_REFERENCE on a later request: an earlier one arrived',
    { code: 'DUPLICATE_REFERENCE', status: 409 },
    false,
    'sent',
  ],
  ['429 RATE_LIMITED', { code: 'RATE_LIMITED', status: 429 }, true, 'wait'],
  ['429 with another code', { code: 'HTTP_ERROR', status: 429 }, true, 'wait'],
  ['403 MERCHANT_DISABLED', { code: 'MERCHANT_DISABLED', status: 403 }, true, 'wait'],
  ['403 MERCHANT_LOCKED', { code: 'MERCHANT_LOCKED', status: 403 }, true, 'wait'],
  ['503 NO_GATEWAY_AVAILABLE', { code: 'NO_GATEWAY_AVAILABLE', status: 503 }, true, 'wait'],
  ['401 INVALID_CREDENTIALS', { code: 'INVALID_CREDENTIALS', status: 401 }, true, 'wait'],
  ['401 TOKEN_EXPIRED', { code: 'TOKEN_EXPIRED', status: 401 }, false, 'wait'],
  ['the client misconfigured', { code: 'INVALID_CONFIGURATION' }, true, 'wait'],
  ['502 OUTCOME_UNKNOWN', { code: 'OUTCOME_UNKNOWN', status: 502 }, true, 'unknown'],
  ['OUTCOME_UNKNOWN after a timeout', { code: 'OUTCOME_UNKNOWN' }, true, 'unknown'],
  [
    '500 with a refusal code (a 5xx may have been processed)',
    { code: 'INVALID_BANK_CODE', status: 500 },
    true,
    'unknown',
  ],
  ['503 that is not NO_GATEWAY_AVAILABLE', { code: 'HTTP_ERROR', status: 503 }, true, 'unknown'],
  ['a refusal code on a 2xx-like status', { code: 'INVALID_AMOUNT', status: 409 }, true, 'unknown'],
  [
    'INVALID_RESPONSE (an answer that does not name the payout)',
    { code: 'INVALID_RESPONSE', status: 200 },
    true,
    'unknown',
  ],
  ['TIMEOUT', { code: 'TIMEOUT' }, true, 'unknown'],
  ['NETWORK_ERROR', { code: 'NETWORK_ERROR' }, true, 'unknown'],
  ['ABORTED', { code: 'ABORTED' }, false, 'unknown'],
  ['an error the SDK did not make', new TypeError('fetch failed'), true, 'unknown'],
  ['a thrown string', 'boom', true, 'unknown'],
  ['null', null, true, 'unknown'],
];

describe('payoutVerdict', () => {
  it.each(rows)('%s', (_label, error, firstRequest, verdict) => {
    expect(payoutVerdict(error, firstRequest)).toBe(verdict);
  });
});
