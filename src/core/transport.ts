/**
 * The transport: the bearer token, the retry loop around attempts, token
 * renewal, pacing, and the errors for a stopped call. Sending and judging one attempt
 * (per-attempt timeout, rate-limit headers, error mapping) is in `attempt.ts`.
 * Resources describe a call ({@link CallSpec}); this module decides whether an attempt
 * may be sent again.
 *
 * @module
 */
import type { TokenAttemptHook, TokenManager } from './tokens/manager.js';
import { attemptReport, type Endpoint, judgeAttempt, sendAttempt } from './attempt.js';
import { AbortError, AuthenticationError, TimeoutError } from './errors/service.js';
import { MyrGatewayError } from './errors/base.js';
import { OutcomeUnknownError } from './errors/outcome.js';
import { CallLimits } from './call-limits.js';
import { millisecondsSetting, retriesSetting } from './settings.js';
import type { Pacer, PaceReport } from './pacing/pacer.js';
import { decide, type Operation, outcomeUnknownAdvice } from './policy.js';
import type { RateLimitInfo } from './pacing/rate-limit-headers.js';
import type { ResolvedRetryOptions } from './retry.js';
import { CallTrace, type Observer } from './observe/observer.js';
import type { ResponseInfo } from './observe/events.js';
import { bothRedact, type Redact } from './redact.js';

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
  /** Which row of the retry policy (src/core/policy.ts) applies. */
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

/** What one call has learned so far, kept by the transport for the outcome of a failed call. */
interface CallProgress {
  maybeProcessed: boolean;
  limits: CallLimits | undefined;
}

/** The settings the transport runs with (resolved by the client). */
export interface TransportConfig {
  baseUrl: string;
  fetch: typeof globalThis.fetch | undefined;
  timeout: number;
  totalTimeout: number;
  retry: ResolvedRetryOptions;
  userAgent: string;
  now: () => number;
  random: () => number;
  sleep: (ms: number, signal?: AbortSignal) => Promise<void>;
  redact: (text: string) => string;
  observer: Observer;
  /** Pacing to the rate limits; undefined when turned off (`rateLimiter: false`). */
  pacer?: Pacer | undefined;
}


export class Transport {
  readonly #config: TransportConfig;
  readonly #endpoint: Endpoint;
  #tokens: TokenManager | undefined;
  #rateLimit: RateLimitInfo | undefined;

  constructor(config: TransportConfig) {
    this.#config = config;
    this.#endpoint = { base: config.baseUrl.replace(/\/+$/, ''), userAgent: config.userAgent, fetch: config.fetch };
  }

  /** Wires the token manager (it needs this transport for its own requests). */
  useTokens(tokens: TokenManager): void {
    this.#tokens = tokens;
  }

  /** The X-RateLimit-* values of the last response that carried them. */
  get rateLimit(): RateLimitInfo | undefined {
    return this.#rateLimit;
  }

  /**
   * Runs a call to completion: attempts, retries, token refresh on TOKEN_EXPIRED.
   * Resolves with the parsed JSON body of a 2xx response and its metadata; throws a MyrGatewayError.
   *
   * @param beforeAttempt runs before every attempt (the token endpoint's local limiter) and
   *   returns what to tell about the attempt once it is over.
   */
  async call(spec: CallSpec, options: RequestOptions = {}, beforeAttempt?: TokenAttemptHook): Promise<CallAnswer> {
    const outcome = await this.settle(spec, options, beforeAttempt);
    if (!outcome.ok) throw outcome.error;
    return outcome;
  }

  /** Like {@link call}, but a failure is returned with what a follow-up needs, not thrown. */
  async settle(spec: CallSpec, options: RequestOptions = {}, beforeAttempt?: TokenAttemptHook): Promise<CallOutcome> {
    const progress: CallProgress = { maybeProcessed: false, limits: undefined };
    const observer = this.#config.observer;
    const observed = (trace: CallTrace) => this.#observed(trace, spec, options, progress, beforeAttempt);
    try {
      // No span to run in: observe the call here, without the closures a span needs.
      const answer = observer.traced() ? await observer.run(spec, observed) : await observed(new CallTrace(observer, spec, undefined));
      return { ok: true, data: answer.data, response: answer.response };
    } catch (error) {
      return { ok: false, error, maybeProcessed: progress.maybeProcessed, remainingMs: Math.max(0, progress.limits?.remaining() ?? 0) };
    }
  }

  async #observed(
    trace: CallTrace,
    spec: CallSpec,
    options: RequestOptions,
    progress: CallProgress,
    beforeAttempt: TokenAttemptHook | undefined,
  ): Promise<CallAnswer> {
    let answer: { data: unknown; status: number };
    try {
      answer = await this.#call(spec, options, progress, beforeAttempt, trace);
    } catch (error) {
      trace.end(error);
      throw error;
    }
    return { data: answer.data, response: trace.succeeded(answer.status) };
  }

  async #call(
    spec: CallSpec,
    options: RequestOptions,
    progress: CallProgress,
    beforeAttempt: TokenAttemptHook | undefined,
    trace: CallTrace,
  ): Promise<{ data: unknown; status: number }> {
    const cfg = this.#config;
    const maxRetries = retriesSetting(options.maxRetries, cfg.retry.maxRetries, 'maxRetries', 'call');
    const limits = new CallLimits(options.signal, millisecondsSetting(options.totalTimeout, cfg.totalTimeout, 'totalTimeout', 'call'));
    const attemptTimeout = millisecondsSetting(options.timeout, cfg.timeout, 'timeout', 'call');
    const body = spec.body === undefined ? undefined : JSON.stringify(spec.body);
    // A call that knows more secrets (a withdrawal's account number) redacts them too; others reuse the client's.
    const judge = spec.redact === undefined ? cfg : { now: cfg.now, redact: bothRedact(cfg.redact, spec.redact) };
    progress.limits = limits;
    let retries = 0;
    let renewedToken = false;

    for (;;) {
      this.#throwIfStopped(limits, spec, progress);
      let token: string | undefined;
      if (spec.authenticated) {
        token = await this.#token(limits, spec, progress);
      }
      // Waiting for a slot happens before anything is sent: it is not a retry.
      let paced: PaceReport | undefined;
      if (cfg.pacer) {
        try {
          paced = await cfg.pacer.acquire(spec.operation, limits.user, limits.remaining(), () => limits.signal);
        } catch (e) {
          throw this.#stopped(e, limits, spec, progress);
        }
      }
      const report = beforeAttempt?.();
      trace.request();
      const attempt = await sendAttempt(this.#endpoint, spec, body, token, attemptTimeout, limits);
      report?.(attemptReport(attempt, cfg.now()));
      paced?.(attempt.kind === 'response' ? attempt.response : undefined);
      const outcome = judgeAttempt(attempt, attemptTimeout, token, judge);
      if (outcome.rateLimit) this.#rateLimit = outcome.rateLimit;
      trace.response(attempt.kind === 'response' ? attempt.response : undefined, outcome.ok ? undefined : outcome.error, outcome.rateLimit);
      if (outcome.ok) return { data: outcome.data, status: outcome.status };

      const { error } = outcome;
      const decision = decide({
        operation: spec.operation,
        attempt: retries + 1,
        outcome: outcome.outcome,
        maxRetries,
        retry: cfg.retry,
        random: cfg.random(),
        remainingMs: limits.remaining(),
        tokenRenewed: renewedToken,
      });
      if (decision.action === 'outcome-unknown') {
        progress.maybeProcessed = true;
        // An attempt cut by the caller's signal or the total timeout: the error says which of
        // them stopped it, not the attempt timeout that never ran out.
        throw attempt.kind === 'timeout' && limits.stopped ? this.#stopped(undefined, limits, spec, progress) : this.#outcomeUnknown(spec, error);
      }
      if ('maybeProcessed' in decision && decision.maybeProcessed) progress.maybeProcessed = true;
      this.#throwIfStopped(limits, spec, progress);
      if (decision.action === 'renew-token' && token !== undefined && this.#tokens) {
        renewedToken = true;
        await this.#tokens.renew(token, limits.signal).catch((e: unknown) => {
          throw this.#stopped(e, limits, spec, progress);
        });
        continue;
      }
      if (decision.action !== 'retry') {
        if (token !== undefined && renewedToken && (error.code === 'TOKEN_EXPIRED' || error.code === 'UNAUTHORIZED')) {
          await this.#tokens?.forget(token);
        }
        throw error;
      }
      retries += 1;
      trace.retry(decision.delayMs);
      try {
        await cfg.sleep(decision.delayMs, limits.signal);
      } catch (e) {
        throw this.#stopped(e, limits, spec, progress);
      }
    }
  }

  async #token(limits: CallLimits, spec: CallSpec, progress: CallProgress): Promise<string> {
    const tokens = this.#tokens;
    if (!tokens) throw new AuthenticationError('No token manager configured', { code: 'UNAUTHORIZED' });
    try {
      // A cached token needs no signal; the getter builds one only for a refresh.
      return await tokens.get(() => limits.signal);
    } catch (e) {
      throw this.#stopped(e, limits, spec, progress);
    }
  }

  #throwIfStopped(limits: CallLimits, spec: CallSpec, progress: CallProgress): void {
    if (limits.stopped) throw this.#stopped(undefined, limits, spec, progress);
  }

  /** The error for a call stopped by the caller's signal or the overall timeout. */
  #stopped(cause: unknown, limits: CallLimits, spec: CallSpec, progress: CallProgress): MyrGatewayError {
    if (cause instanceof MyrGatewayError) return cause;
    const maybe = progress.maybeProcessed && spec.operation === 'payment.create'
      ? `; an attempt may have reached the service: ${outcomeUnknownAdvice(spec.operation, spec.referenceId ?? '')}`
      : '';
    const referenceId = spec.referenceId;
    const error = limits.user?.aborted
      ? new AbortError(`ABORTED: the call was aborted by its signal${maybe}`, { code: 'ABORTED', referenceId })
      : limits.expired
        ? new TimeoutError(`TIMEOUT: the call did not finish within its total timeout${maybe}`, {
            code: 'TIMEOUT',
            retryable: true,
            referenceId,
          })
        : new MyrGatewayError('The call stopped unexpectedly', { code: 'HTTP_ERROR', referenceId });
    if (progress.maybeProcessed && (spec.operation === 'withdraw' || spec.operation === 'withdraw.recover')) {
      return this.#outcomeUnknown(spec, error);
    }
    return error;
  }

  /** A money-moving request that may have been processed, and will not be sent again here. */
  #outcomeUnknown(spec: CallSpec, error: MyrGatewayError): OutcomeUnknownError {
    const referenceId = spec.referenceId ?? '';
    return new OutcomeUnknownError(
      `OUTCOME_UNKNOWN: the ${spec.method} /${spec.path} request for reference_id ${referenceId} may have reached the service ` +
        `(${error.message}); it was not sent again because a second attempt could move money twice. ` +
        outcomeUnknownAdvice(spec.operation, referenceId),
      { referenceId, status: error.status, correlationId: error.correlationId, cause: error },
    );
  }
}
