/**
 * Building the mock's answers: the error envelope, the rate-limit headers, fault answers.
 *
 * @module
 */
import type { RateDecision } from './state.js';
import type { FaultResponse } from './types/faults.js';

/** Per-response context: the correlation id and the request path for the second 429 body. */
export interface AnswerContext {
  correlationId: string;
  /** Full request path, as the spec's second 429 body reports it. */
  path: string;
  now: number;
}

/** Headers every real answer of the mock carries (A11, A12). */
export function baseHeaders(ctx: AnswerContext, rate: RateDecision | undefined): Record<string, string> {
  const headers: Record<string, string> = { 'X-Correlation-ID': ctx.correlationId };
  if (rate) {
    headers['X-RateLimit-Limit'] = String(rate.limit);
    headers['X-RateLimit-Remaining'] = String(rate.remaining);
    headers['X-RateLimit-Reset'] = String(rate.reset);
  }
  return headers;
}

/** A JSON answer. */
export function json(status: number, body: unknown, headers: Record<string, string>): Response {
  return new Response(JSON.stringify(body), {
    status,
    headers: { ...headers, 'Content-Type': 'application/json' },
  });
}

/** The spec's error envelope. */
export function errorBody(code: string, message: string) {
  return { status: 'error' as const, error: code, message };
}

/** The spec's second 429 body, the one a framework rate limiter sends. */
export function nestRateLimitBody(ctx: AnswerContext) {
  return {
    statusCode: 429,
    message: 'Too Many Requests',
    error: 'Too Many Requests',
    timestamp: new Date(ctx.now).toISOString(),
    path: ctx.path,
    correlationId: ctx.correlationId,
  };
}

/** A 429 answer in either body shape. */
export function rateLimited(ctx: AnswerContext, shape: 'envelope' | 'nest', headers: Record<string, string>): Response {
  const body = shape === 'nest' ? nestRateLimitBody(ctx) : errorBody('RATE_LIMITED', 'Too many requests');
  return json(429, body, headers);
}

const DEFAULT_CODES: Record<number, string> = {
  400: 'VALIDATION_ERROR',
  401: 'UNAUTHORIZED',
  403: 'MERCHANT_DISABLED',
  404: 'NOT_FOUND',
  409: 'DUPLICATE_REFERENCE',
  429: 'RATE_LIMITED',
  502: 'GATEWAY_ERROR',
  503: 'NO_GATEWAY_AVAILABLE',
  504: 'GATEWAY_TIMEOUT',
};

/** The error code a status fault uses when none is given. */
export function defaultCodeFor(status: number): string {
  return DEFAULT_CODES[status] ?? 'INTERNAL_ERROR';
}

/**
 * The answer of a fault (never called for `delay`, which only waits).
 * `rate` is the window the request belongs to, for the headers of a `rateLimit` fault.
 */
export function faultAnswer(
  fault: Exclude<FaultResponse, { type: 'delay' }>,
  ctx: AnswerContext,
  rateLimit: number | undefined,
): Response {
  const correlation = { 'X-Correlation-ID': ctx.correlationId };
  switch (fault.type) {
    case 'networkError':
      return Response.error();
    case 'status':
      return json(
        fault.status,
        errorBody(fault.code ?? defaultCodeFor(fault.status), fault.message ?? `Injected HTTP ${fault.status}`),
        { ...correlation, ...fault.headers },
      );
    case 'tokenExpired':
      return json(401, errorBody('TOKEN_EXPIRED', 'Access token expired'), correlation);
    case 'rateLimit': {
      const headers: Record<string, string> = { ...correlation };
      if (fault.retryAfter !== undefined) headers['Retry-After'] = String(fault.retryAfter);
      if (rateLimit !== undefined) {
        headers['X-RateLimit-Limit'] = String(rateLimit);
        headers['X-RateLimit-Remaining'] = '0';
        const wait = typeof fault.retryAfter === 'number' ? fault.retryAfter : 60;
        headers['X-RateLimit-Reset'] = String(Math.ceil(ctx.now / 1000) + wait);
      }
      return rateLimited(ctx, fault.shape ?? 'envelope', headers);
    }
    case 'html':
      return new Response(
        `<!DOCTYPE html><html><head><title>${fault.status} Error</title></head>` +
          `<body><h1>${fault.status} Error</h1><p>The upstream server returned an error.</p></body></html>`,
        { status: fault.status, headers: { 'Content-Type': 'text/html; charset=utf-8' } },
      );
    case 'body': {
      const status = fault.status ?? 200;
      const headers = { ...correlation, 'Content-Type': 'application/json', ...fault.headers };
      const text = typeof fault.body === 'string' ? fault.body : JSON.stringify(fault.body);
      return new Response(status === 204 || status === 304 ? null : text, { status, headers });
    }
  }
}
