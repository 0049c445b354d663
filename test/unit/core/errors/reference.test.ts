/** Stamping the call's reference_id on SDK errors (src/core/errors/reference.ts). */
import { describe, expect, it } from 'vitest';
import { referenceOf, tagReference } from '../../../../src/core/errors/reference.js';
import type { MyrGatewayError } from '../../../../src/core/errors/base.js';
import { NotFoundError } from '../../../../src/core/errors/service.js';

describe('referenceOf and tagReference', () => {
  it('reports only a reference_id of the allowed form', () => {
    expect(referenceOf({ reference_id: 'ORDER1' })).toBe('ORDER1');
    expect(referenceOf({ reference_id: 'ORDER-1' })).toBeUndefined();
    expect(referenceOf({ reference_id: 'A'.repeat(101) })).toBeUndefined();
    expect(referenceOf(null)).toBeUndefined();
  });

  it('tags a copy, so an error shared by several waiting calls keeps no one call reference', () => {
    const shared = new NotFoundError('NOT_FOUND (HTTP 404): no', { code: 'NOT_FOUND', status: 404 });
    const tagged = tagReference(shared, 'ORDER1') as MyrGatewayError;
    expect(tagged).not.toBe(shared);
    expect(tagged).toBeInstanceOf(NotFoundError);
    expect(tagged).toMatchObject({ referenceId: 'ORDER1', code: 'NOT_FOUND', status: 404, message: shared.message });
    expect(shared.referenceId).toBeUndefined();
    expect(tagReference(tagged, 'ORDER2')).toBe(tagged);
    const plain = new Error('x');
    expect(tagReference(plain, 'ORDER1')).toBe(plain);
    expect(tagReference(shared, undefined)).toBe(shared);
  });
});
