/**
 * src/core/errors/from-response.ts on its own: every code of the spec's error table, both 429 body
 * shapes and the bodies a proxy puts in front of the service each become the right class of
 * the one error tree, with the right retryable flag, and never echo a secret.
 */
import { describe, expect, it } from 'vitest';
import {
  ApiError,
  AuthenticationError,
  DuplicateReferenceError,
  NotFoundError,
  RateLimitError,
  ServiceUnavailableError,
} from '../../../../src/core/errors/service.js';
import { ConfigurationError, InvalidRequestError, MyrGatewayError } from '../../../../src/core/errors/base.js';
import { errorFromResponse, parseErrorBody } from '../../../../src/core/errors/from-response.js';

const noRedact = (text: string) => text;

function failed(status: number, body: unknown, headers: Record<string, string> = {}, retryAfterMs?: number) {
  return {
    status,
    headers: new Headers(headers),
    text: typeof body === 'string' ? body : JSON.stringify(body),
    retryAfterMs,
  };
}

const envelope = (error: string, message = 'spec message') => ({ status: 'error', error, message });

// Every row of the spec's error table through the whole client: test/integration/client-errors.test.ts.
describe('errorFromResponse: status and code beyond the table', () => {
  it('builds the message from code, status and the service message', () => {
    const error = errorFromResponse(failed(503, envelope('NO_GATEWAY_AVAILABLE')), noRedact);
    expect(error).toBeInstanceOf(MyrGatewayError);
    expect(error.message).toBe('NO_GATEWAY_AVAILABLE (HTTP 503): spec message');
  });

  it('a DUPLICATE_REFERENCE sent with another status is still a DuplicateReferenceError', () => {
    expect(errorFromResponse(failed(400, envelope('DUPLICATE_REFERENCE')), noRedact)).toBeInstanceOf(
      DuplicateReferenceError,
    );
  });

  it("a 422 (the spec's non-https callback_url) is an InvalidRequestError; an unknown code passes through", () => {
    const error = errorFromResponse(failed(422, envelope('INSECURE_CALLBACK_URL')), noRedact);
    expect(error).toBeInstanceOf(InvalidRequestError);
    expect(error.code).toBe('INSECURE_CALLBACK_URL');
  });

  it('any other status is an ApiError with the generic code', () => {
    const error = errorFromResponse(failed(418, '{}'), noRedact);
    expect(error).toBeInstanceOf(ApiError);
    expect(error).toMatchObject({ code: 'HTTP_ERROR', retryable: false });
  });
});

describe('errorFromResponse: body shapes', () => {
  it("reads the rate limiter's alternative 429 body: no code in it, its correlationId kept, Retry-After in seconds", () => {
    const body = {
      statusCode: 429,
      message: 'Too Many Requests',
      error: 'Too Many Requests',
      timestamp: '2026-03-01T10:00:00Z',
      path: '/api/v1/payment/request',
      correlationId: 'corr-429',
    };
    const error = errorFromResponse(failed(429, body, {}, 1500), noRedact);
    expect(error).toBeInstanceOf(RateLimitError);
    expect(error).toMatchObject({ code: 'RATE_LIMITED', correlationId: 'corr-429', retryAfter: 2, retryable: true });
  });

  it('takes the correlation id from the body, then x-correlation-id, then x-request-id', () => {
    expect(
      errorFromResponse(
        failed(400, { ...envelope('VALIDATION_ERROR'), correlation_id: 'b' }, { 'x-correlation-id': 'h' }),
        noRedact,
      ).correlationId,
    ).toBe('b');
    expect(
      errorFromResponse(
        failed(400, envelope('VALIDATION_ERROR'), { 'x-correlation-id': 'h', 'x-request-id': 'r' }),
        noRedact,
      ).correlationId,
    ).toBe('h');
    expect(
      errorFromResponse(failed(400, envelope('VALIDATION_ERROR'), { 'x-request-id': 'r' }), noRedact).correlationId,
    ).toBe('r');
  });

  it.each([
    [502, '<!doctype html><h1>Bad gateway</h1>', ServiceUnavailableError, 'HTTP_ERROR', 'non-JSON (HTML) error page'],
    [401, '', AuthenticationError, 'UNAUTHORIZED', 'no error message'],
    [429, 'null', RateLimitError, 'RATE_LIMITED', 'no error message'],
  ] as const)('a %i with %j from a proxy is a %s with code %s', (status, text, Class, code, detail) => {
    const error = errorFromResponse(failed(status, text), noRedact);
    expect(error).toBeInstanceOf(Class);
    expect(error.code).toBe(code);
    expect(error.message).toBe(`${code} (HTTP ${status}): ${detail}`);
  });

  it.each([
    ['an HTML page', 'https://api.gateway.example/payment/request', '<html><body>Not Found</body></html>'],
    ['an empty body', 'https://api.gateway.example/payment/status/ORDER1', ''],
    [
      'the NOT_FOUND envelope on the token path',
      'https://api.gateway.example/auth/token',
      JSON.stringify(envelope('NOT_FOUND', 'No such endpoint')),
    ],
  ])('a 404 with %s is a ConfigurationError naming baseUrl and the URL (query dropped)', (_label, url, text) => {
    const error = errorFromResponse({ ...failed(404, text), url: `${url}?token=abc` }, noRedact);
    expect(error).toBeInstanceOf(ConfigurationError);
    expect(error).toMatchObject({ code: 'INVALID_CONFIGURATION', field: 'baseUrl', status: 404, retryable: false });
    expect(error.message).toContain(`${url} answered 404`);
    expect(error.message).toContain('/api/v1');
    expect(error.message).not.toContain('token=abc');
  });

  it("the service's NOT_FOUND envelope elsewhere stays a NotFoundError", () => {
    const error = errorFromResponse(
      { ...failed(404, envelope('NOT_FOUND', 'No payment')), url: 'https://h/api/v1/payment/status/X' },
      noRedact,
    );
    expect(error).toBeInstanceOf(NotFoundError);
  });

  it('a lowercase or overlong "error" is not taken as a code', () => {
    expect(parseErrorBody(JSON.stringify({ error: 'bad things' })).code).toBeUndefined();
    expect(parseErrorBody(JSON.stringify({ error: `X${'A'.repeat(80)}` })).code).toBeUndefined();
    expect(parseErrorBody(JSON.stringify({ error: 'GATEWAY_ERROR' })).code).toBe('GATEWAY_ERROR');
  });

  it('a redirect says the SDK does not follow it, whatever the body claims', () => {
    const error = errorFromResponse(failed(302, envelope('VALIDATION_ERROR', 'go elsewhere')), noRedact);
    expect(error.message).toMatch(/does not follow/);
    expect(error.message).not.toContain('go elsewhere');
  });

  it("passes the service's message through the redactor", () => {
    const error = errorFromResponse(
      failed(400, envelope('VALIDATION_ERROR', 'api_key sk_live_secret is wrong')),
      (text) => text.replaceAll('sk_live_secret', '[redacted]'),
    );
    expect(error.message).not.toContain('sk_live_secret');
    expect(error.message).toContain('[redacted]');
  });
});
