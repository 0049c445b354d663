/**
 * Turns zod results into the SDK's errors: request problems become InvalidRequestError
 * with the spec's code and the field at fault; malformed success bodies become
 * InvalidResponseError.
 *
 * @module
 */
import * as z from 'zod/mini';
import { InvalidRequestError } from './errors/base.js';
import { InvalidResponseError } from './errors/service.js';
import { credentialFreeUrl, isLoopbackHttp } from './urls.js';

const PROVIDER_CHANNEL_FIELD = 'metadata.provider_channel_id';

/** The spec's code for a failed rule and the field to name, chosen by the path that broke it. */
function codeFor(path: readonly PropertyKey[], input: unknown): { code: string; field: string | undefined } {
  const field = path.length > 0 ? path.join('.') : undefined;
  if (field === 'amount') return { code: 'INVALID_AMOUNT', field };
  // A missing metadata object on BANK_TRANSFER is a missing provider channel, not a shape error.
  const params = input as { metadata?: unknown; payment_method?: unknown } | null;
  if (field === PROVIDER_CHANNEL_FIELD || (field === 'metadata' && params?.payment_method === 'BANK_TRANSFER')) {
    const metadata = params?.metadata;
    const channel =
      metadata !== null && typeof metadata === 'object'
        ? (metadata as Record<string, unknown>).provider_channel_id
        : undefined;
    const missing = channel === undefined || channel === null || channel === '';
    if (field === PROVIDER_CHANNEL_FIELD || missing) {
      return { code: missing ? 'MISSING_PROVIDER_CHANNEL' : 'INVALID_PROVIDER_CHANNEL', field: PROVIDER_CHANNEL_FIELD };
    }
  }
  return { code: 'VALIDATION_ERROR', field };
}

/**
 * Parses request params; throws InvalidRequestError naming the first field at fault.
 * Nothing is sent when this throws.
 */
export function validateRequest<S extends z.ZodMiniType>(schema: S, input: unknown, what: string): z.output<S> {
  if (input === null || typeof input !== 'object' || Array.isArray(input)) {
    throw new InvalidRequestError(`VALIDATION_ERROR: ${what} params must be an object`, { code: 'VALIDATION_ERROR' });
  }
  const result = z.safeParse(schema, input);
  if (result.success) return result.data;
  const issue = result.error.issues[0];
  const { code, field } = codeFor(issue?.path ?? [], input);
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
export function parseSuccess<S extends z.ZodMiniType>(
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
  const result = z.safeParse(schema, envelope.data);
  if (result.success) return result.data;
  const issue = result.error.issues[0];
  const field = issue?.path.join('.') ?? '';
  throw new InvalidResponseError(
    `INVALID_RESPONSE: the ${what} answer has a malformed field ${field || '(data)'}: ${issue?.message ?? 'invalid'}${accepted}`,
    { code: 'INVALID_RESPONSE', field: field || undefined },
  );
}

/** What a 2xx answer to a money-moving call was checked against, and what to say if it fails. */
export interface AnswerCheck {
  what: string;
  /** Appended to every message: that the request may have been processed, and how to follow up. */
  followUp: string;
  allowInsecureLoopback: boolean;
}

function invalid(check: AnswerCheck, field: string, problem: string): InvalidResponseError {
  return new InvalidResponseError(`INVALID_RESPONSE: the ${check.what} answer ${problem}${check.followUp}`, {
    code: 'INVALID_RESPONSE',
    field,
  });
}

/** An echoed value as it reads in a message: quoted text, or its JSON (an object the service sent). */
function shown(value: unknown): string {
  if (
    typeof value === 'string' ||
    typeof value === 'number' ||
    typeof value === 'boolean' ||
    typeof value === 'bigint'
  ) {
    return JSON.stringify(String(value));
  }
  return JSON.stringify(value) ?? typeof value;
}

/** An echoed value, when the service sent one, must be the one we sent. */
export function checkEcho(check: AnswerCheck, field: string, sent: string | number, echoed: unknown): void {
  if (echoed === undefined || echoed === null || echoed === sent) return;
  throw invalid(
    check,
    field,
    `echoes ${field} ${shown(echoed).slice(0, 120)}, not the ${JSON.stringify(String(sent))} that was sent`,
  );
}

/**
 * A URL the merchant will hand to a customer must be https (http only to loopback when the
 * client allows it): a `javascript:` or `data:` URL would run in the customer's browser.
 */
export function checkCustomerUrl(check: AnswerCheck, field: string, value: unknown): void {
  if (value === undefined || value === null) return;
  const url = credentialFreeUrl(value);
  const ok = url !== undefined && (url.protocol === 'https:' || (check.allowInsecureLoopback && isLoopbackHttp(url)));
  if (!ok)
    throw invalid(check, field, `carries a ${field} that is not an https:// URL, which must never reach a customer`);
}
