/**
 * Public types of the mock's fault injection: which answer a fault makes and when it applies.
 *
 * @module
 */
import type { Endpoint } from './options.js';

/**
 * The answer a {@link Fault} gives.
 *
 * - `status`: a JSON error envelope `{ status: 'error', error: code, message }`. `code`
 *   defaults from the status (400 VALIDATION_ERROR, 401 UNAUTHORIZED, 403 MERCHANT_DISABLED,
 *   404 NOT_FOUND, 409 DUPLICATE_REFERENCE, 429 RATE_LIMITED, 502 GATEWAY_ERROR,
 *   503 NO_GATEWAY_AVAILABLE, 504 GATEWAY_TIMEOUT, anything else INTERNAL_ERROR).
 * - `rateLimit`: 429; `Retry-After` only when `retryAfter` is given (a number is seconds,
 *   a string is sent verbatim, e.g. an HTTP date); `shape` picks the body (default envelope).
 * - `html`: a `text/html` error page, as a proxy would send.
 * - `networkError`: the connection fails (msw's `HttpResponse.error()`).
 * - `delay`: wait `ms` real milliseconds, then go on normally (or with the next matching fault).
 * - `tokenExpired`: 401 TOKEN_EXPIRED (the token itself stays valid).
 * - `body`: any JSON body (default status 200), e.g. a malformed success; a string body is sent verbatim.
 */
export type FaultResponse =
  | {
      /** A JSON error envelope. */
      type: 'status';
      /** HTTP status of the answer. */
      status: number;
      /** The envelope's `error` code; defaults from the status (see above). */
      code?: string;
      /** The envelope's `message`. */
      message?: string;
      /** Extra response headers. */
      headers?: Record<string, string>;
    }
  | {
      /** A 429 from the rate limiter. */
      type: 'rateLimit';
      /** `Retry-After`: seconds, or a string sent verbatim (an HTTP date). Absent: no header. */
      retryAfter?: number | string;
      /** Body shape: the error envelope (default) or the spec's second 429 body (`'nest'`). */
      shape?: 'envelope' | 'nest';
    }
  | {
      /** A `text/html` error page, as a proxy sends. */
      type: 'html';
      /** HTTP status of the page. */
      status: number;
    }
  | {
      /** The connection fails (fetch rejects; `mock.serve()` destroys the socket). */
      type: 'networkError';
    }
  | {
      /** Wait, then answer normally (or with the next matching fault). */
      type: 'delay';
      /** Real milliseconds to wait. */
      ms: number;
    }
  | {
      /** 401 TOKEN_EXPIRED once; the token itself stays valid. */
      type: 'tokenExpired';
    }
  | {
      /** Any body, e.g. a malformed success. */
      type: 'body';
      /** HTTP status. @default 200 */
      status?: number;
      /** A JSON value, or a string sent verbatim. */
      body: unknown;
      /** Extra response headers. */
      headers?: Record<string, string>;
    };

/**
 * A scripted misbehaviour. Faults wait in a FIFO queue; each matching request takes the
 * first one that matches its endpoint.
 *
 * @example
 * ```ts
 * // 502 twice on payment creation, then normal answers
 * mock.fault({ endpoint: 'payment.create', times: 2, response: { type: 'status', status: 502 } });
 * // the withdrawal is stored, but the answer is lost
 * mock.fault({ endpoint: 'withdraw', when: 'after', response: { type: 'networkError' } });
 * ```
 */
export interface Fault {
  /**
   * Which endpoint it applies to; `'*'` matches every request under the base URL.
   * @default '*'
   * @example { endpoint: 'withdraw', response: { type: 'networkError' } }
   */
  endpoint?: Endpoint | '*';
  /**
   * How many matching requests it answers before it is used up. `Infinity` never runs out.
   * @default 1
   * @example { times: 3, response: { type: 'status', status: 503 } }
   */
  times?: number;
  /**
   * `'before'`: answer the fault instead of processing the request. `'after'`: process the
   * request normally (state changes, rate window counted), then answer the fault instead
   * of the real answer: "the server did it but the answer was lost". An `'after'` fault is
   * taken only by a request that passed rate limiting and authentication (a token request
   * with valid credentials, or a call with a valid token); a request refused with 401, 403 or
   * 429 gets that answer and leaves the fault queued for the next one.
   * @default 'before'
   * @example { when: 'after', response: { type: 'status', status: 504 } }
   */
  when?: 'before' | 'after';
  /**
   * What to answer.
   * @example { response: { type: 'rateLimit', retryAfter: 2 } }
   */
  response: FaultResponse;
}
