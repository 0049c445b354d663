/**
 * What a call is: what a resource asks of the transport ({@link CallSpec}), the options a
 * merchant passes to each method ({@link RequestOptions}), and how the call ends.
 *
 * @module
 */
import type { Operation } from './retry-policy.js';
import type { ResponseInfo } from '../observe/events.js';
import type { Redact } from '../redact.js';

/** Options every API method accepts as its last argument. */
export interface RequestOptions {
  /**
   * Aborts the call, including a pending backoff wait.
   * @example
   * ```ts
   * await gateway.payments.retrieve('ORDER1001', { signal: AbortSignal.timeout(5000) });
   * ```
   */
  signal?: AbortSignal;
  /**
   * Milliseconds one attempt may take before it is abandoned.
   * @default the client's `timeout` (30000)
   */
  timeout?: number;
  /**
   * Milliseconds the whole call may take, all attempts and waits included.
   * @default the client's `totalTimeout` (120000)
   */
  totalTimeout?: number;
  /**
   * Retries after the first attempt, for failures that may be retried.
   * @default the client's `maxRetries` (3)
   */
  maxRetries?: number;
}

/** One API call as a resource describes it. */
export interface CallSpec {
  method: 'GET' | 'POST';
  /** Path below the base URL, without a leading slash. */
  path: string;
  body?: unknown;
  /** Whether the call carries the bearer token. */
  authenticated: boolean;
  /** Which row of the retry policy (src/core/call/retry-policy.ts) applies. */
  operation: Operation;
  /** For error messages of money-moving calls. */
  referenceId?: string;
  /** Masks what else of the request must not come back in a message (a withdrawal's account number). */
  redact?: Redact;
}

/** A call that succeeded: the parsed JSON body, and what the SDK saw of the answer (`result.lastResponse`). */
export interface CallAnswer {
  data: unknown;
  response: ResponseInfo;
}

/**
 * How a call ended, for a resource that follows up on a failure: a payment create whose attempt
 * may have been processed looks the payment up with the time the call has left.
 */
export type CallOutcome =
  | ({ ok: true } & CallAnswer)
  | {
      ok: false;
      /** What the call failed with (a MyrGatewayError, or whatever a merchant's hook threw). */
      error: unknown;
      /** An attempt may have been processed by the service. */
      maybeProcessed: boolean;
      /** Milliseconds left of the call's total timeout, for a follow-up lookup. */
      remainingMs: number;
    };
