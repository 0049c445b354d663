/**
 * The service's rate-limit headers, as last seen by a client.
 *
 * @module
 */

/** Values of the `X-RateLimit-*` headers of the last response that carried them. */
export interface RateLimitInfo {
  /** Maximum requests in the current window (`X-RateLimit-Limit`). */
  limit: number | undefined;
  /** Requests left in the window (`X-RateLimit-Remaining`). */
  remaining: number | undefined;
  /** When the window resets, Unix seconds (`X-RateLimit-Reset`). */
  reset: number | undefined;
  /** When this client saw these values, epoch milliseconds. */
  observedAt: number;
}

/** A plain decimal number; `Number()` alone would read '' as 0 and accept '0x10' or '1e3'. */
const DECIMAL = /^-?\d+(?:\.\d+)?$/;

function intHeader(headers: Headers, name: string): number | undefined {
  const raw = headers.get(name)?.trim();
  return raw !== undefined && DECIMAL.test(raw) ? Number(raw) : undefined;
}

/** Reads the headers; undefined when the response carried none of them. */
export function readRateLimit(headers: Headers, now: number): RateLimitInfo | undefined {
  const limit = intHeader(headers, 'x-ratelimit-limit');
  const remaining = intHeader(headers, 'x-ratelimit-remaining');
  const reset = intHeader(headers, 'x-ratelimit-reset');
  if (limit === undefined && remaining === undefined && reset === undefined) return undefined;
  return { limit, remaining, reset, observedAt: now };
}
