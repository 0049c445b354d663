/**
 * Turns zod results into the SDK's errors: request problems become InvalidRequestError
 * with the spec's code and the field at fault; malformed success bodies become
 * InvalidResponseError.
 *
 * @module
 */
import type { z } from 'zod';
import { InvalidRequestError, InvalidResponseError } from './errors.js';

/** The spec's code for a failed rule, chosen by the field that broke it. */
function codeFor(path: readonly PropertyKey[], input: unknown): string {
  const field = path.join('.');
  if (field === 'amount') return 'INVALID_AMOUNT';
  if (field === 'metadata.provider_channel_id') {
    const metadata = (input as { metadata?: Record<string, unknown> } | null)?.metadata;
    const channel = metadata?.provider_channel_id;
    return channel === undefined || channel === null || channel === '' ? 'MISSING_PROVIDER_CHANNEL' : 'INVALID_PROVIDER_CHANNEL';
  }
  return 'VALIDATION_ERROR';
}

/**
 * Parses request params; throws InvalidRequestError naming the first field at fault.
 * Nothing is sent when this throws.
 */
export function validateRequest<S extends z.ZodType>(schema: S, input: unknown, what: string): z.output<S> {
  if (input === null || typeof input !== 'object' || Array.isArray(input)) {
    throw new InvalidRequestError(`VALIDATION_ERROR: ${what} params must be an object`, { code: 'VALIDATION_ERROR' });
  }
  const result = schema.safeParse(input);
  if (result.success) return result.data;
  const issue = result.error.issues[0];
  const path = issue?.path ?? [];
  const field = path.length > 0 ? path.join('.') : undefined;
  const code = codeFor(path, input);
  const reason = issue?.message ?? 'invalid value';
  const more = result.error.issues.length > 1 ? ` (and ${result.error.issues.length - 1} more problem(s))` : '';
  throw new InvalidRequestError(`${code}: ${what} rejected before sending: ${reason}${more}`, {
    code,
    field,
  });
}

/**
 * Checks a 2xx body against the success envelope and the data schema.
 * Extra fields are kept; missing or mistyped fields are an InvalidResponseError.
 */
export function parseSuccess<S extends z.ZodType>(
  schema: S,
  body: unknown,
  what: string,
  /** Appended to the message: what the 2xx already means (for money-moving calls). */
  accepted = '',
): z.output<S> {
  const envelope = body as { status?: unknown; data?: unknown } | null;
  if (envelope === null || typeof envelope !== 'object' || envelope.status !== 'success' || !('data' in envelope)) {
    throw new InvalidResponseError(
      `INVALID_RESPONSE: the ${what} answer is not the success envelope { status: 'success', data }${accepted}`,
      { code: 'INVALID_RESPONSE' },
    );
  }
  const result = schema.safeParse(envelope.data);
  if (result.success) return result.data;
  const issue = result.error.issues[0];
  const field = issue?.path.join('.') ?? '';
  throw new InvalidResponseError(
    `INVALID_RESPONSE: the ${what} answer has a malformed field ${field || '(data)'}: ${issue?.message ?? 'invalid'}${accepted}`,
    { code: 'INVALID_RESPONSE', field: field || undefined },
  );
}
