/**
 * The client's retry settings (`retry`, `maxRetries`): their defaults and their ranges. What is
 * retried and how long to wait is decided in retry-policy.ts, with these settings.
 *
 * @module
 */
import { ConfigurationError } from '../errors/base.js';
import { isMilliseconds, MAX_TIMER_MS } from '../milliseconds.js';
import { DEFAULTS, retriesSetting } from '../settings.js';

/** Retry settings of a client; the defaults follow the spec's retry guidance. */
export interface RetryOptions {
  /**
   * Retries after the first attempt.
   * @default 3
   */
  maxRetries?: number;
  /**
   * First backoff delay; doubles on each retry (1 s, 2 s, 4 s).
   * @default 1000
   */
  baseDelayMs?: number;
  /**
   * Largest random jitter added to each backoff delay.
   * @default 1000
   */
  jitterMs?: number;
  /**
   * Cap for a single wait, including a `Retry-After` the service asked for. A longer
   * `Retry-After` ends the call with the service's answer (a RateLimitError for a 429)
   * instead of waiting.
   * @default 60000
   */
  maxDelayMs?: number;
}

/** Settings with every default filled in. */
export type ResolvedRetryOptions = Required<RetryOptions>;

/** The one millisecond rule (core/milliseconds.ts), with the message naming `retry.<field>`. */
function delaySetting(value: number | undefined, fallback: number, field: string, min: number): number {
  if (value === undefined) return fallback;
  if (!isMilliseconds(value, min)) {
    throw new ConfigurationError(
      `retry.${field} must be a whole number of milliseconds from ${min} to ${MAX_TIMER_MS}`,
      field,
    );
  }
  return value;
}

/**
 * Fills in the defaults and refuses, with a ConfigurationError, a setting the backoff cannot
 * use (negative, NaN, beyond a timer's range): a NaN delay would retry at once, in a hot loop.
 */
export function resolveRetryOptions(options: RetryOptions | undefined): ResolvedRetryOptions {
  return {
    maxRetries: retriesSetting(options?.maxRetries, DEFAULTS.maxRetries, 'maxRetries', 'client'),
    baseDelayMs: delaySetting(options?.baseDelayMs, 1000, 'baseDelayMs', 0),
    jitterMs: delaySetting(options?.jitterMs, 1000, 'jitterMs', 0),
    maxDelayMs: delaySetting(options?.maxDelayMs, 60_000, 'maxDelayMs', 1),
  };
}
