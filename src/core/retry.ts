/**
 * Retry settings, `Retry-After` parsing, the not-sent system codes and the abortable sleep.
 * The decision itself (retry, wait, stop, outcome unknown) is in policy.ts.
 *
 * @module
 */

/** Retry settings of a client; every field has a default taken from the spec's guidance. */
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
   * `Retry-After` ends the call with the RateLimitError instead of waiting.
   * @default 60000
   */
  maxDelayMs?: number;
}

/** Settings with every default filled in. */
export type ResolvedRetryOptions = Required<RetryOptions>;

/** Resolves defaults and rejects nonsense values. */
export function resolveRetryOptions(options: RetryOptions | undefined): ResolvedRetryOptions {
  return {
    maxRetries: options?.maxRetries ?? 3,
    baseDelayMs: options?.baseDelayMs ?? 1000,
    jitterMs: options?.jitterMs ?? 1000,
    maxDelayMs: options?.maxDelayMs ?? 60_000,
  };
}

/**
 * Parses a `Retry-After` value (delay seconds or an HTTP date) into milliseconds from `now`.
 * Returns undefined when absent or unparseable.
 */
export function parseRetryAfter(value: string | null | undefined, now: number): number | undefined {
  if (value === null || value === undefined) return undefined;
  const trimmed = value.trim();
  if (trimmed === '') return undefined;
  if (/^\d+(?:\.\d+)?$/.test(trimmed)) return Math.round(Number(trimmed) * 1000);
  const date = Date.parse(trimmed);
  if (Number.isNaN(date)) return undefined;
  return Math.max(0, date - now);
}

/** System error codes that mean the request never left this machine or never reached a server. */
const NOT_SENT_CODES = new Set([
  'ECONNREFUSED',
  'ENOTFOUND',
  'EAI_AGAIN',
  'ENETUNREACH',
  'EHOSTUNREACH',
  'EADDRNOTAVAIL',
  'UND_ERR_CONNECT_TIMEOUT',
  'CERT_HAS_EXPIRED',
  'DEPTH_ZERO_SELF_SIGNED_CERT',
  'SELF_SIGNED_CERT_IN_CHAIN',
  'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
  'ERR_TLS_CERT_ALTNAME_INVALID',
]);

/** Whether a network failure's system code proves the request was never delivered. */
export function isNotSentCode(code: string | undefined): boolean {
  return code !== undefined && NOT_SENT_CODES.has(code);
}

/** Abort-aware sleep. Rejects with the signal's reason as soon as it aborts. */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) {
      reject(signal.reason);
      return;
    }
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal?.reason);
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}
