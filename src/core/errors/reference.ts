/**
 * The call's `reference_id` stamped on the SDK errors it throws, so a merchant's catch block
 * can tell which order failed.
 *
 * @module
 */
import * as z from 'zod/mini';
import { referenceIdSchema } from '../../schemas/common.js';
import { MyrGatewayError } from './base.js';

/** A reference_id that can be reported on an error: the request's, when it has the allowed form. */
export function referenceOf(params: unknown): string | undefined {
  if (typeof params !== 'object' || params === null || !('reference_id' in params)) return undefined;
  const parsed = z.safeParse(referenceIdSchema, params.reference_id);
  return parsed.success ? parsed.data : undefined;
}

/**
 * The SDK error with the call's reference_id, when it lacks one; other errors pass unchanged.
 * A copy, never the error itself: one token failure is shared by every call that waited for it.
 */
export function tagReference(error: unknown, referenceId: string | undefined): unknown {
  if (referenceId === undefined || !(error instanceof MyrGatewayError) || error.referenceId !== undefined) return error;
  // The copy gets the error's own prototype: a MyrGatewayError subclass, as checked above.
  const copy = Object.create(Object.getPrototypeOf(error) as object) as MyrGatewayError;
  Object.defineProperties(copy, Object.getOwnPropertyDescriptors(error));
  Object.defineProperty(copy, 'referenceId', {
    value: referenceId,
    enumerable: true,
    writable: true,
    configurable: true,
  });
  return copy;
}
