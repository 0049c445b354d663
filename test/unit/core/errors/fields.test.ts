import { describe, expect, it } from 'vitest';
import { fieldOfCode } from '../../../../src/core/errors/fields.js';

describe('fieldOfCode: the spec error table, code to request field', () => {
  it.each([
    ['INVALID_AMOUNT', 'amount'],
    ['DUPLICATE_REFERENCE', 'reference_id'],
    ['MISSING_PROVIDER_CHANNEL', 'metadata.provider_channel_id'],
    ['INVALID_PROVIDER_CHANNEL', 'metadata.provider_channel_id'],
    ['INVALID_BANK_CODE', 'bank_code'],
    ['VALIDATION_ERROR', undefined],
    ['INVALID_CREDENTIALS', undefined],
    ['RATE_LIMITED', undefined],
    ['SOMETHING_NEW', undefined],
    ['toString', undefined],
    ['__proto__', undefined],
  ])('%s → %s', (code, field) => {
    expect(fieldOfCode(code)).toBe(field);
  });
});
