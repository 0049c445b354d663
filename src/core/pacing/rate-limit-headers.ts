/**
 * What an answer's headers say about waiting: `X-RateLimit-*` and `Retry-After`, read once per
 * answer ({@link readAnswerTiming}) and handed as such to the policy, the pacer, the token
 * limiter and the error.
 *
 * @module
 */
import { DECIMAL_STRING } from '../../schemas/amount.js';

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

/** An HTTP date (every form begins with the day name; `Date.parse` alone would take "-5" as a year), in Unix ms. */
function httpDate(value: string): number | undefined {
  if (!/^[A-Za-z]{3}/.test(value)) return undefined;
  const date = Date.parse(value);
  return Number.isNaN(date) ? undefined : date;
}

/**
 * Parses a `Retry-After` value (delay seconds or an HTTP date) into milliseconds from `now`.
 * Returns undefined when absent or unparseable. A date in the past is a wait of 0.
 */
export function parseRetryAfter(value: string | null | undefined, now: number): number | undefined {
  if (value === null || value === undefined) return undefined;
  const trimmed = value.trim();
  if (trimmed === '') return undefined;
  if (DECIMAL_STRING.test(trimmed)) return Math.round(Number(trimmed) * 1000);
  const date = httpDate(trimmed);
  return date === undefined ? undefined : Math.max(0, date - now);
}

/** What one answer's headers say about waiting, in milliseconds from when it was read. */
export interface AnswerTiming {
  /** Its `X-RateLimit-*` values, when it carried any. */
  rateLimit: RateLimitInfo | undefined;
  /** Its `Retry-After`, exact (never rounded to whole seconds). */
  retryAfterMs: number | undefined;
  /** Until its `X-RateLimit-Reset` (negative once passed). */
  resetInMs: number | undefined;
  /** Its `Date` minus the clock it was read against (the service's clock against ours, to a second). */
  dateInMs: number | undefined;
}

/** Reads an answer's timing headers, once, against the client's clock `now`. */
export function readAnswerTiming(headers: Headers, now: number): AnswerTiming {
  const rateLimit = readRateLimit(headers, now);
  const date = httpDate(headers.get('date')?.trim() ?? '');
  return {
    rateLimit,
    retryAfterMs: parseRetryAfter(headers.get('retry-after'), now),
    resetInMs: rateLimit?.reset === undefined ? undefined : rateLimit.reset * 1000 - now,
    dateInMs: date === undefined ? undefined : date - now,
  };
}
