/**
 * src/core/errors/service.ts: a DUPLICATE_REFERENCE tells the merchant's log whether the
 * payment already under that reference is most likely their own (an earlier attempt of the
 * same call may have created it), and shows it when the SDK found it.
 */
import { describe, expect, it } from 'vitest';
import { MyrGatewayError } from '../../../../src/core/errors/base.js';
import { DuplicateReferenceError } from '../../../../src/core/errors/service.js';

describe('DuplicateReferenceError', () => {
  it('adds the existing payment and the earlier-attempt flag to its JSON only when known', () => {
    const error = new DuplicateReferenceError('DUPLICATE_REFERENCE', {
      code: 'DUPLICATE_REFERENCE',
      status: 409,
      referenceId: 'ORDER1',
    });
    expect(error).toBeInstanceOf(MyrGatewayError);
    expect(error.toJSON()).not.toHaveProperty('existingPayment');
    expect(error.toJSON()).not.toHaveProperty('earlierAttemptMayHaveSucceeded');

    error.existingPayment = {
      payment_id: 'pay_1',
      reference_id: 'ORDER1',
      status: 'SUCCESS',
      amount: 50,
      currency: 'MYR',
    };
    error.earlierAttemptMayHaveSucceeded = true;
    expect(JSON.parse(JSON.stringify(error))).toMatchObject({
      name: 'DuplicateReferenceError',
      code: 'DUPLICATE_REFERENCE',
      status: 409,
      referenceId: 'ORDER1',
      existingPayment: { payment_id: 'pay_1', status: 'SUCCESS' },
      earlierAttemptMayHaveSucceeded: true,
    });
  });
});
