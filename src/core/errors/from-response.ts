/**
 * The one place where a non-2xx response becomes a {@link MyrGatewayError} (a failed connection:
 * `connection.ts`). Resources never build errors from responses themselves.
 *
 * @module
 */
import {
  ApiError,
  AuthenticationError,
  DuplicateReferenceError,
  NotFoundError,
  PermissionDeniedError,
  RateLimitError,
  ServiceUnavailableError,
} from './service.js';
import { ConfigurationError, InvalidRequestError, type MyrGatewayError, type MyrGatewayErrorInit } from './base.js';
import { isRetryable } from '../call/retry-policy.js';

/** What the transport knows about a failed response. */
export interface FailedResponse {
  status: number;
  headers: Headers;
  /** The body as text (already read). */
  text: string;
  /** Milliseconds the service asked to wait, from `Retry-After`. */
  retryAfterMs: number | undefined;
  /** The URL that answered (`Response.url`; empty when a custom fetch did not set it). */
  url?: string | undefined;
}

/** The parts of an error body we understand, from either of the spec's error shapes. */
export interface ParsedErrorBody {
  code: string | undefined;
  message: string | undefined;
  correlationId: string | undefined;
}

const CODE_PATTERN = /^[A-Z][A-Z0-9_]{2,63}$/;

/** Reads the spec's error envelope, or the rate limiter's alternative 429 body. */
export function parseErrorBody(text: string): ParsedErrorBody {
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    body = null;
  }
  if (body === null || typeof body !== 'object')
    return { code: undefined, message: undefined, correlationId: undefined };
  const record = body as Record<string, unknown>;
  const error = typeof record.error === 'string' ? record.error : undefined;
  const message = typeof record.message === 'string' ? record.message : undefined;
  const correlation = record.correlationId ?? record.correlation_id;
  return {
    // The second 429 body says `error: "Too Many Requests"`, which is not a code.
    code: error !== undefined && CODE_PATTERN.test(error) ? error : undefined,
    message,
    correlationId: typeof correlation === 'string' ? correlation : undefined,
  };
}

/** Correlation id from the response headers, when the service sends one. */
export function correlationIdFrom(headers: Headers): string | undefined {
  return headers.get('x-correlation-id') ?? headers.get('x-request-id') ?? undefined;
}

function defaultCode(status: number): string {
  if (status === 429) return 'RATE_LIMITED';
  if (status === 404) return 'NOT_FOUND';
  if (status === 401) return 'UNAUTHORIZED';
  return 'HTTP_ERROR';
}

/**
 * A 404 that only a wrong `baseUrl` explains: one from `/auth/token` (which always exists), or
 * one without the service's error envelope (a web server or proxy answered, not the service).
 * Read as "payment not found", it would send a merchant hunting for a payment.
 */
function wrongBaseUrl(response: FailedResponse, parsed: ParsedErrorBody): ConfigurationError | undefined {
  if (response.status !== 404) return undefined;
  // Without query or fragment, which may carry identifiers.
  const url = response.url?.replace(/[?#].*$/s, '');
  const fromToken = url?.endsWith('/auth/token') === true;
  if (!fromToken && parsed.code !== undefined) return undefined;
  return new ConfigurationError(
    `${url || 'the service'} answered 404 ${fromToken ? 'to the token request' : 'without an error body'}: check baseUrl, ` +
      'which must end with the API prefix, such as https://<host>/api/v1',
    'baseUrl',
    { status: 404, correlationId: parsed.correlationId ?? correlationIdFrom(response.headers) },
  );
}

/**
 * Builds the error for a non-2xx response. `redact` strips secrets from any text the
 * service echoed back.
 */
export function errorFromResponse(response: FailedResponse, redact: (text: string) => string): MyrGatewayError {
  const parsed = parseErrorBody(response.text);
  const wrongAddress = wrongBaseUrl(response, parsed);
  if (wrongAddress) return wrongAddress;
  const code = parsed.code ?? defaultCode(response.status);
  const retryAfter = response.retryAfterMs === undefined ? undefined : Math.ceil(response.retryAfterMs / 1000);
  const detail =
    response.status >= 300 && response.status < 400
      ? 'a redirect, which the SDK does not follow (it would re-send credentials); check baseUrl'
      : parsed.message
        ? // Cut after redacting (no secret is left half-cut): a body of megabytes is no message.
          redact(parsed.message).slice(0, 500)
        : response.text.trimStart().startsWith('<')
          ? 'non-JSON (HTML) error page'
          : 'no error message';
  const message = `${code} (HTTP ${response.status}): ${detail}`;
  const init: MyrGatewayErrorInit = {
    code,
    status: response.status,
    retryable: isRetryable({ kind: 'http', status: response.status, code }),
    correlationId: parsed.correlationId ?? correlationIdFrom(response.headers),
    retryAfter,
  };
  const status = response.status;
  if (status === 429) return new RateLimitError(message, init);
  if (status >= 500) return new ServiceUnavailableError(message, init);
  if (status === 401) return new AuthenticationError(message, init);
  if (status === 403) return new PermissionDeniedError(message, init);
  if (status === 404) return new NotFoundError(message, init);
  if (status === 409 || code === 'DUPLICATE_REFERENCE') return new DuplicateReferenceError(message, init);
  if (status === 400 || status === 422) return new InvalidRequestError(message, init);
  return new ApiError(message, init);
}
