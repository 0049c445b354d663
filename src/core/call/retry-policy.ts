/**
 * The one decision after a failed attempt: retry (and wait how long), renew the token,
 * stop, or report the outcome unknown. A pure function of the operation, the attempt and
 * its outcome; the transport only carries it out. test/unit/core/call/retry-policy.test.ts lists every row.
 *
 * Money-safety rules, in order:
 * 1. An outcome **may have been processed** when the request may have reached the service and no
 *    definite answer came back: a timeout, a connection lost after sending, a 5xx other than
 *    503 NO_GATEWAY_AVAILABLE. Everything else (429, 401, 4xx, connection refused) certainly
 *    moved no money.
 * 2. A withdrawal (`withdraw`, `withdraw.recover`) that may have been processed is never sent
 *    again: `outcome-unknown`.
 * 3. A payment create is sent again with the same `reference_id` (the service refuses a second
 *    payment under it; the resource reconciles DUPLICATE_REFERENCE).
 * 4. Waits: exponential backoff plus jitter; a `Retry-After` is honoured but never followed
 *    earlier than asked, never below the backoff (so 0 or garbage is no hot loop), and spread by
 *    jitter so clients told the same value do not come back in lock-step. A 429 without
 *    `Retry-After` waits for its `X-RateLimit-Reset` the same way.
 * 5. No wait runs past the call's total timeout; a `Retry-After` above `maxDelayMs` stops.
 *
 * @module
 */
import type { ConnectionStage } from '../errors/connection.js';
import type { ResolvedRetryOptions } from './retry-options.js';

/** What is being called. */
export type Operation = 'token' | 'status' | 'payment.create' | 'withdraw' | 'withdraw.recover';

/** How one attempt failed: what the policy decides on. */
export type AttemptFailure =
  | {
      kind: 'http';
      status: number;
      code: string;
      retryAfterMs?: number | undefined;
      /** Milliseconds until `X-RateLimit-Reset`: the wait of a 429 that carries no `Retry-After`. */
      resetInMs?: number | undefined;
    }
  /** How far the request got: no connection, TLS refused the server, or it may have been sent. */
  | { kind: 'network'; stage: ConnectionStage }
  | { kind: 'timeout' };

/** Everything the decision depends on. */
export interface PolicyInput {
  operation: Operation;
  /** Attempts made so far, this one included (1 for the first). */
  attempt: number;
  outcome: AttemptFailure;
  maxRetries: number;
  retry: ResolvedRetryOptions;
  /** A value in [0, 1) for the jitter. */
  random: number;
  /** Milliseconds left of the call's total timeout. */
  remainingMs: number;
  /** A fresh token was already fetched once in this call. */
  tokenRenewed: boolean;
}

/** What to do next. `maybeProcessed` says whether this attempt may have been acted on. */
export type Decision =
  | { action: 'retry'; delayMs: number; maybeProcessed: boolean }
  | { action: 'renew-token' }
  | { action: 'stop'; maybeProcessed: boolean }
  | { action: 'outcome-unknown' };

/**
 * Whether `operation` moves money at most once: a withdrawal (or its recovery) that may have been
 * processed is never sent again; it ends OUTCOME_UNKNOWN.
 */
export function isAtMostOnce(operation: Operation): boolean {
  return operation === 'withdraw' || operation === 'withdraw.recover';
}

/** Whether the service refused the bearer token itself (a fresh token may be fetched once). */
export function isTokenRefusal(code: string): boolean {
  return code === 'TOKEN_EXPIRED' || code === 'UNAUTHORIZED';
}

/** Whether an attempt that ended this way may have been processed by the service. */
export function mayHaveBeenProcessed(outcome: AttemptFailure): boolean {
  if (outcome.kind === 'timeout') return true;
  if (outcome.kind === 'network') return outcome.stage === 'exchange';
  // Only the spec's own pair proves nothing was processed: a 502/504 that carries this code is
  // an upstream's answer of unknown meaning, and a withdrawal must not be sent again after it.
  return outcome.status >= 500 && !(outcome.status === 503 && outcome.code === 'NO_GATEWAY_AVAILABLE');
}

/**
 * Whether a failure of this kind may succeed when sent again: what `error.retryable` says, and
 * what {@link decide} retries. A 401 TOKEN_EXPIRED is retryable (with a fresh token). A TLS
 * handshake that failed is not: the scheme, host or certificate is wrong, the service cannot
 * recover from that.
 */
export function isRetryable(outcome: AttemptFailure): boolean {
  if (outcome.kind === 'network') return outcome.stage !== 'handshake';
  if (outcome.kind === 'timeout') return true;
  return outcome.status === 429 || outcome.status >= 500 || outcome.code === 'TOKEN_EXPIRED';
}

/** Backoff for retry `n` (1-based), or at least `Retry-After`, plus jitter; undefined = stop. */
export function retryDelay(
  n: number,
  retryAfterMs: number | undefined,
  retry: ResolvedRetryOptions,
  random: number,
): number | undefined {
  const backoff = retry.baseDelayMs * 2 ** (n - 1);
  if (retryAfterMs === undefined) return Math.min(retry.maxDelayMs, backoff + Math.floor(random * retry.jitterMs));
  if (retryAfterMs > retry.maxDelayMs) return undefined;
  const floor = Math.max(retryAfterMs, Math.min(backoff, retry.maxDelayMs));
  // The spread grows with the wait (a quarter of it), so a crowd told "60" spreads over 15 s.
  const spread = Math.max(retry.jitterMs, Math.floor(floor / 4));
  return Math.max(floor, Math.min(retry.maxDelayMs, floor + Math.floor(random * spread)));
}

/** The wait the service asked for: `Retry-After`, else for a 429 its `X-RateLimit-Reset`. */
function serverWait(outcome: AttemptFailure): number | undefined {
  if (outcome.kind !== 'http') return undefined;
  if (outcome.retryAfterMs !== undefined || outcome.status !== 429 || outcome.resetInMs === undefined)
    return outcome.retryAfterMs;
  return Math.max(0, outcome.resetInMs);
}

/** The decision after a failed attempt. Pure: same input, same answer. */
export function decide(input: PolicyInput): Decision {
  const { operation, outcome } = input;
  const maybeProcessed = mayHaveBeenProcessed(outcome);
  if (isAtMostOnce(operation) && maybeProcessed) return { action: 'outcome-unknown' };
  if (outcome.kind === 'http' && outcome.status === 401) {
    const renewable = operation !== 'token' && isTokenRefusal(outcome.code);
    return renewable && !input.tokenRenewed ? { action: 'renew-token' } : { action: 'stop', maybeProcessed };
  }
  if (!isRetryable(outcome) || input.attempt > input.maxRetries) return { action: 'stop', maybeProcessed };
  const delayMs = retryDelay(input.attempt, serverWait(outcome), input.retry, input.random);
  if (delayMs === undefined || delayMs >= input.remainingMs) return { action: 'stop', maybeProcessed };
  return { action: 'retry', delayMs, maybeProcessed };
}

/** What a merchant should do about a money-moving request whose outcome is unknown. */
export function outcomeUnknownAdvice(operation: Operation, referenceId: string): string {
  if (isAtMostOnce(operation)) {
    return `Wait for the callback for reference_id ${referenceId} or call withdrawals.recover with the same params (never a second payout); send no new withdrawal before either answers.`;
  }
  return `Call payments.create again with the same reference_id ${referenceId} (it returns the existing payment, never a second one) or wait for the callback; not under a new reference_id yet.`;
}
