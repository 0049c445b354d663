/**
 * What hooks and results tell about a call: the per-attempt events the `onRequest`,
 * `onResponse` and `onRetry` hooks receive, and the response metadata put on results as
 * `lastResponse`. Built from a fixed list of fields only, never a header or a body.
 *
 * @module
 */
import type { RateLimitInfo } from '../pacing/rate-limit-headers.js';

/** The facts about one attempt, as hooks, log lines and spans carry them. */
export interface RequestEvent {
  /** `GET` or `POST`. */
  method: string;
  /** The path below the base URL, such as `/payment/request`. */
  path: string;
  /** 1 for the first attempt of the call. */
  attempt: number;
  /** The `reference_id` of a payment or withdrawal create. */
  referenceId?: string | undefined;
}

/** An attempt that ended: with an HTTP answer (`status`) or without one (timeout, network). */
export interface ResponseEvent extends RequestEvent {
  /** HTTP status; undefined when no answer came (timeout, dropped connection). */
  status: number | undefined;
  /** Milliseconds from sending the attempt to reading its answer. */
  durationMs: number;
  /** The service's correlation id (header or error body), when it sent one. */
  correlationId: string | undefined;
  /** The `X-RateLimit-*` headers of the answer, when it carried them. */
  rateLimit: RateLimitInfo | undefined;
  /** The error code the attempt ended with (`RATE_LIMITED`, `TIMEOUT`, …); undefined on success. */
  errorCode: string | undefined;
}

/** A failed attempt that will be sent again after `delayMs`. */
export interface RetryEvent extends ResponseEvent {
  /** Milliseconds the SDK waits before the next attempt. */
  delayMs: number;
}

/** The response metadata of a successful call (`result.lastResponse`). */
export interface ResponseInfo {
  /** HTTP status of the answer the result came from. */
  status: number;
  /** The service's correlation id (`X-Correlation-Id`/`X-Request-Id`), when it sent one. */
  correlationId: string | undefined;
  /** The `X-RateLimit-*` headers of that answer, when it carried them. */
  rateLimit: RateLimitInfo | undefined;
  /** Attempts the call made, the successful one included. */
  attempts: number;
  /** Milliseconds the whole call took, waits between attempts included. */
  durationMs: number;
}

/** A result with its response metadata in a non-enumerable `lastResponse` property. */
export type WithResponse<T> = T & {
  /**
   * What the SDK saw of the HTTP answer behind this result. Non-enumerable: not in
   * `JSON.stringify`, a spread or `Object.keys` of the result.
   */
  readonly lastResponse: ResponseInfo;
};

/** Puts `info` on `result` as the non-enumerable `lastResponse` (see {@link WithResponse}). */
export function withResponse<T extends object>(result: T, info: ResponseInfo | undefined): WithResponse<T> {
  if (info) Object.defineProperty(result, 'lastResponse', { value: Object.freeze(info), enumerable: false, configurable: true });
  // The transport records `info` on every successful call, so lastResponse is defined above.
  // A caller passing undefined (reconcile, re-reading a result) gets a result without it: the
  // type overstates that case.
  return result as WithResponse<T>;
}
