/**
 * The transport: one ky instance, the bearer token, the retry loop around attempts, token
 * renewal, pacing, and the errors for a stopped call. Sending and judging one attempt
 * (per-attempt timeout, rate-limit headers, error mapping) is in `attempt.ts`.
 * Resources describe a call ({@link CallSpec}); this module decides whether an attempt
 * may be sent again.
 *
 * @module
 */
import ky, { type KyInstance } from 'ky';
import type { TokenAttemptHook, TokenManager } from './tokens/manager.js';
import { attemptReport, judgeAttempt, sendAttempt } from './attempt.js';
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
}

/** Mutable facts about a call that the resource reads after it failed. */
export interface CallState {
  /** An earlier attempt may have been processed by the service. */
  maybeProcessed: boolean;
  /** Set by the transport: milliseconds left of the call's total timeout, for follow-up lookups. */
  remainingMs?: () => number;
  /** Set by the transport when the call succeeded: what the answer carried (`result.lastResponse`). */
  response?: ResponseInfo | undefined;
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
  readonly #ky: KyInstance;
  #tokens: TokenManager | undefined;
  #rateLimit: RateLimitInfo | undefined;

  constructor(config: TransportConfig) {
    this.#config = config;
    const customFetch = config.fetch;
    this.#ky = ky.create({
      prefix: config.baseUrl,
      retry: 0,
      timeout: false,
      throwHttpErrors: false,
      // A redirect would re-send the body (the api_key on /auth/token) and the bearer token to
      // whatever host the Location names, http:// included. 3xx answers are errors instead.
      redirect: 'manual',
      // Looked up per request, so a fetch patched after construction (msw, instrumentation) is used.
      fetch: (input, init) => (customFetch ?? globalThis.fetch)(input, init),
      headers: { accept: 'application/json', 'user-agent': config.userAgent },
    });
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
   * Resolves with the parsed JSON body of a 2xx response; throws a MyrGatewayError.
   *
   * @param beforeAttempt runs before every attempt (the token endpoint's local limiter) and
   *   returns what to tell about the attempt once it is over.
   */
  async call(
    spec: CallSpec,
    options: RequestOptions = {},
    state: CallState = { maybeProcessed: false },
    beforeAttempt?: TokenAttemptHook,
  ): Promise<unknown> {
    const observer = this.#config.observer;
    if (observer.traced()) {
      return observer.run(spec, (trace) => this.#call(spec, options, state, beforeAttempt, trace), (info) => (state.response = info));
    }
    // No span to run in: observe the call here, without the closures a span needs.
    return this.#observed(new CallTrace(observer, spec, undefined), spec, options, state, beforeAttempt);
  }

  async #observed(trace: CallTrace, spec: CallSpec, options: RequestOptions, state: CallState, beforeAttempt: TokenAttemptHook | undefined): Promise<unknown> {
    let data: unknown;
    try {
      data = await this.#call(spec, options, state, beforeAttempt, trace);
    } catch (error) {
      trace.end(error);
      throw error;
    }
    state.response = trace.end(undefined);
    return data;
  }

  async #call(spec: CallSpec, options: RequestOptions, state: CallState, beforeAttempt: TokenAttemptHook | undefined, trace: CallTrace): Promise<unknown> {
    const cfg = this.#config;
    const maxRetries = retriesSetting(options.maxRetries, cfg.retry.maxRetries, 'maxRetries', 'call');
    const limits = new CallLimits(options.signal, millisecondsSetting(options.totalTimeout, cfg.totalTimeout, 'totalTimeout', 'call'));
    const attemptTimeout = millisecondsSetting(options.timeout, cfg.timeout, 'timeout', 'call');
    const body = spec.body === undefined ? undefined : JSON.stringify(spec.body);
    state.remainingMs = () => limits.remaining();
    let retries = 0;
    let renewedToken = false;

    for (;;) {
      this.#throwIfStopped(limits, spec, state);
      let token: string | undefined;
      if (spec.authenticated) {
        token = await this.#token(limits, spec, state);
      }
      // Waiting for a slot happens before anything is sent: it is not a retry.
      let paced: PaceReport | undefined;
      if (cfg.pacer) {
        try {
          paced = await cfg.pacer.acquire(spec.operation, limits.user, limits.remaining());
        } catch (e) {
          throw this.#stopped(e, limits, spec, state);
        }
      }
      const report = beforeAttempt?.();
      trace.request();
      const attempt = await sendAttempt(this.#ky, spec, body, token, attemptTimeout, limits);
      report?.(attemptReport(attempt, cfg.now()));
      paced?.(attempt.kind === 'response' ? attempt.response : undefined);
      const outcome = judgeAttempt(attempt, attemptTimeout, token, cfg);
      if (outcome.rateLimit) this.#rateLimit = outcome.rateLimit;
      trace.response(attempt.kind === 'response' ? attempt.response : undefined, outcome.ok ? undefined : outcome.error, outcome.rateLimit);
      if (outcome.ok) return outcome.data;

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
        state.maybeProcessed = true;
        throw this.#outcomeUnknown(spec, error);
      }
      if ('maybeProcessed' in decision && decision.maybeProcessed) state.maybeProcessed = true;
      this.#throwIfStopped(limits, spec, state);
      if (decision.action === 'renew-token' && token !== undefined && this.#tokens) {
        renewedToken = true;
        await this.#tokens.renew(token, limits.signal).catch((e: unknown) => {
          throw this.#stopped(e, limits, spec, state);
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
        throw this.#stopped(e, limits, spec, state);
      }
    }
  }

  async #token(limits: CallLimits, spec: CallSpec, state: CallState): Promise<string> {
    const tokens = this.#tokens;
    if (!tokens) throw new AuthenticationError('No token manager configured', { code: 'UNAUTHORIZED' });
    try {
      // A cached token needs no signal; the getter builds one only for a refresh.
      return await tokens.get(() => limits.signal);
    } catch (e) {
      throw this.#stopped(e, limits, spec, state);
    }
  }

  #throwIfStopped(limits: CallLimits, spec: CallSpec, state: CallState): void {
    if (limits.stopped) throw this.#stopped(undefined, limits, spec, state);
  }

  /** The error for a call stopped by the caller's signal or the overall timeout. */
  #stopped(cause: unknown, limits: CallLimits, spec: CallSpec, state: CallState): MyrGatewayError {
    if (cause instanceof MyrGatewayError) return cause;
    const maybe = state.maybeProcessed && spec.operation === 'payment.create'
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
    if (state.maybeProcessed && (spec.operation === 'withdraw' || spec.operation === 'withdraw.recover')) {
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
