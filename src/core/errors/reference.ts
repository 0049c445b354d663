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
  const value = (params as { reference_id?: unknown } | null)?.reference_id;
  return z.safeParse(referenceIdSchema, value).success ? (value as string) : undefined;
}

/**
 * The SDK error with the call's reference_id, when it lacks one; other errors pass unchanged.
 * A copy, never the error itself: one token failure is shared by every call that waited for it.
 */
export function tagReference(error: unknown, referenceId: string | undefined): unknown {
  if (referenceId === undefined || !(error instanceof MyrGatewayError) || error.referenceId !== undefined) return error;
  const copy = Object.create(Object.getPrototypeOf(error) as object) as MyrGatewayError;
  Object.defineProperties(copy, Object.getOwnPropertyDescriptors(error));
  Object.defineProperty(copy, 'referenceId', { value: referenceId, enumerable: true, writable: true, configurable: true });
  return copy;
}
