/**
 * The transport: ky runs every call (one `ky.create` per client): its attempt timeout, its total
 * timeout, its retries and its hooks. What ky asks, this module answers from the SDK's rules:
 * - `shouldRetry` asks `policy.ts` about the attempt just judged, always answering true or false;
 * - `beforeRequest`/`beforeRetry` wait out the policy's backoff (with the client's `sleep`),
 *   take the bearer token (renewed after a TOKEN_EXPIRED decision) and the pacing slot, under the
 *   call's own signal, so no such wait is ever inside ky's attempt timeout;
 * - ky's `fetch` is one wrapper that sends each attempt and sees its answer or failure once
 *   (`attempt.ts`: judged, reported to the pacer, the token limiter, `rateLimit` and the trace);
 * - what ky throws is turned into the SDK's error tree in one place ({@link Transport}'s `#failure`).
 * Resources describe a call ({@link CallSpec}).
 *
 * @module
 */
import ky, { isTimeoutError } from 'ky';
import type { TokenAttemptHook, TokenManager } from './tokens/manager.js';
import { type Attempt, attemptReport, type Endpoint, type Judgement, judgeAttempt, sendAttempt } from './attempt.js';
import { AbortError, AuthenticationError, TimeoutError } from './errors/service.js';
import { MyrGatewayError } from './errors/base.js';
import { OutcomeUnknownError } from './errors/outcome.js';
import { CallDeadline } from './call-deadline.js';
import { millisecondsSetting, retriesSetting } from './settings.js';
import type { Pacer, PaceReport } from './pacing/pacer.js';
import { decide, type Decision, isAtMostOnce, isTokenRefusal, type Operation, outcomeUnknownAdvice } from './policy.js';
import type { RateLimitInfo } from './pacing/rate-limit-headers.js';
import type { ResolvedRetryOptions } from './retry-options.js';
import { CallTrace, type Observer } from './observe/observer.js';
import type { ResponseInfo } from './observe/events.js';
import { bothRedact, type Redact } from './redact.js';
import type { TokenAttemptReport } from './tokens/shared.js';

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

/** What one call has learned so far: ky carries it to the hooks in its `context`. */
class CallState {
  readonly spec: CallSpec;
  readonly body: string | undefined;
  readonly limits: CallDeadline;
  readonly trace: CallTrace;
  readonly maxRetries: number;
  readonly attemptTimeout: number;
  readonly judge: { redact: Redact };
  readonly beforeAttempt: TokenAttemptHook | undefined;
  token: string | undefined;
  /** Retries the policy granted (a token renewal is not one). */
  retries = 0;
  tokenRenewed = false;
  /** The policy decided to renew the token before the next attempt. */
  renewNext = false;
  /** The backoff the policy chose before the next attempt. */
  delayMs = 0;
  /** An attempt may have been processed by the service. */
  maybeProcessed = false;
  /** The last attempt, judged once by the fetch wrapper, and whether the policy has decided on it. */
  last: { attempt: Attempt; judged: Judgement } | undefined;
  decided = false;
  /** The error the call ends with, once the policy or a hook has decided it. */
  final: unknown;
  /** What the next attempt reports to the pacer and the token limiter when it ends. */
  paced: PaceReport | undefined;
  reported: ((report: TokenAttemptReport) => void) | undefined;
  /** The hook running before the next attempt (backoff, token, pacing slot), until it settles. */
  preparing: Promise<void> | undefined;

  constructor(
    spec: CallSpec,
    limits: CallDeadline,
    trace: CallTrace,
    settings: { maxRetries: number; attemptTimeout: number; judge: { redact: Redact } },
    beforeAttempt: TokenAttemptHook | undefined,
  ) {
    this.spec = spec;
    this.body = spec.body === undefined ? undefined : JSON.stringify(spec.body);
    this.limits = limits;
    this.trace = trace;
    this.maxRetries = settings.maxRetries;
    this.attemptTimeout = settings.attemptTimeout;
    this.judge = settings.judge;
    this.beforeAttempt = beforeAttempt;
  }
}

/** The call behind a ky hook (its `context`); undefined for a request ky made without one. */
function callOf(options: { readonly context: Record<string, unknown> }): CallState | undefined {
  const call = options.context.call;
  return call instanceof CallState ? call : undefined;
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

/** ky's methods, lower case, that the policy may retry: every call of the API is one of them. */
const RETRIED_METHODS = ['get', 'post'];

export class Transport {
  readonly #config: TransportConfig;
  readonly #endpoint: Endpoint;
  readonly #ky: typeof ky;
  #tokens: TokenManager | undefined;
  #rateLimit: RateLimitInfo | undefined;

  constructor(config: TransportConfig) {
    this.#config = config;
    this.#endpoint = { userAgent: config.userAgent, fetch: config.fetch };
    // The backoff is waited in beforeRetry with the client's `sleep`, so ky's own delay is 0:
    // `sleep` keeps its meaning (merchants' tests make it instant or record it), and the wait is
    // bounded by the call's signal and total timeout like every other wait of a call.
    this.#ky = ky.create({
      prefix: config.baseUrl,
      redirect: 'manual',
      hooks: {
        beforeRequest: [({ options }) => this.#beforeAttempt(callOf(options), false)],
        beforeRetry: [({ options }) => this.#beforeAttempt(callOf(options), true)],
      },
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
   * Resolves with the parsed JSON body of a 2xx response and its metadata; throws a MyrGatewayError.
   *
   * @param beforeAttempt runs before every attempt (the token endpoint's local limiter) and
   *   returns what to tell about the attempt once it is over.
   */
  async call(spec: CallSpec, options: RequestOptions = {}, beforeAttempt?: TokenAttemptHook): Promise<CallAnswer> {
    const outcome = await this.outcomeOf(spec, options, beforeAttempt);
    if (!outcome.ok) throw outcome.error;
    return outcome;
  }

  /** Like {@link call}, but a failure is returned with what a follow-up needs, not thrown. */
  async outcomeOf(spec: CallSpec, options: RequestOptions = {}, beforeAttempt?: TokenAttemptHook): Promise<CallOutcome> {
    const observer = this.#config.observer;
    let state: CallState | undefined;
    const observed = async (trace: CallTrace): Promise<CallAnswer> => {
      try {
        state = this.#start(spec, options, trace, beforeAttempt);
        const answer = await this.#run(state);
        return { data: answer.data, response: trace.succeeded(answer.status) };
      } catch (error) {
        trace.end(error);
        throw error;
      }
    };
    try {
      // No span to run in: observe the call here, without the closures a span needs.
      const answer = observer.traced() ? await observer.run(spec, observed) : await observed(new CallTrace(observer, spec, undefined));
      return { ok: true, data: answer.data, response: answer.response };
    } catch (error) {
      return { ok: false, error, maybeProcessed: state?.maybeProcessed ?? false, remainingMs: Math.max(0, state?.limits.remaining() ?? 0) };
    }
  }

  #start(spec: CallSpec, options: RequestOptions, trace: CallTrace, beforeAttempt: TokenAttemptHook | undefined): CallState {
    const cfg = this.#config;
    const maxRetries = retriesSetting(options.maxRetries, cfg.retry.maxRetries, 'maxRetries', 'call');
    const limits = new CallDeadline(options.signal, millisecondsSetting(options.totalTimeout, cfg.totalTimeout, 'totalTimeout', 'call'));
    const attemptTimeout = millisecondsSetting(options.timeout, cfg.timeout, 'timeout', 'call');
    // A call that knows more secrets (a withdrawal's account number) redacts them too; others reuse the client's.
    const judge = spec.redact === undefined ? cfg : { redact: bothRedact(cfg.redact, spec.redact) };
    return new CallState(spec, limits, trace, { maxRetries, attemptTimeout, judge }, beforeAttempt);
  }

  async #run(state: CallState): Promise<{ data: unknown; status: number }> {
    const { spec, limits } = state;
    try {
      await this.#ky(spec.path, {
        method: spec.method,
        ...(limits.user ? { signal: limits.user } : {}),
        timeout: state.attemptTimeout,
        totalTimeout: Math.max(1, Math.ceil(limits.remaining())),
        // One more than the retries: a token renewal is one of ky's retries, not one of the policy's.
        retry: { limit: state.maxRetries + 1, methods: RETRIED_METHODS, shouldRetry: () => this.#shouldRetry(state), delay: () => 0 },
        context: { call: state },
        // ky hands its fetch the Request it built (prefix + path, its signal).
        fetch: (request) => (request instanceof Request ? this.#attempt(state, request) : Promise.reject(new TypeError('ky passed no Request'))),
      });
    } catch (error) {
      throw await this.#failure(state, error);
    } finally {
      // A slot taken for an attempt that was never sent (the call stopped first) is given back.
      state.paced?.(undefined);
      state.paced = undefined;
    }
    const judged = state.last?.judged;
    if (!judged?.ok) throw this.#stopped(undefined, state);
    return { data: judged.data, status: judged.status };
  }

  /**
   * ky's `fetch`: one attempt, seen once. It ends when the answer is read, when the connection
   * fails, or at once when its signal aborts (ky's attempt timeout, the total timeout, the
   * caller), so the attempt is judged and reported before ky goes on to `shouldRetry`.
   */
  async #attempt(state: CallState, request: Request): Promise<Response> {
    const signal = request.signal;
    let ended = false;
    const end = (attempt: Attempt) => {
      if (ended) return;
      ended = true;
      signal.removeEventListener('abort', onAbort);
      this.#judged(state, attempt);
    };
    const onAbort = () => end({ kind: 'timeout' });
    signal.addEventListener('abort', onAbort, { once: true });
    state.trace.request();
    const attempt = await sendAttempt(this.#endpoint, { url: request.url, method: state.spec.method, body: state.body, token: state.token }, signal, this.#config.now);
    end(attempt);
    if (attempt.kind === 'response') return attempt.response;
    throw attempt.kind === 'network' ? attempt.raw : signal.reason;
  }

  /** Reports an attempt that is over, and judges it for the policy (once). */
  #judged(state: CallState, attempt: Attempt): void {
    state.reported?.(attemptReport(attempt));
    state.reported = undefined;
    state.paced?.(attempt.kind === 'response' ? { status: attempt.response.status, timing: attempt.timing } : undefined);
    state.paced = undefined;
    const judged = judgeAttempt(attempt, state.attemptTimeout, state.token, state.judge);
    if (judged.rateLimit) this.#rateLimit = judged.rateLimit;
    state.trace.response(attempt.kind === 'response' ? attempt.response : undefined, judged.ok ? undefined : judged.error, judged.rateLimit);
    state.last = { attempt, judged };
    state.decided = false;
  }

  /** ky's `shouldRetry`: the policy's answer for the attempt just judged, never undefined. */
  async #shouldRetry(state: CallState): Promise<boolean> {
    const last = state.last;
    if (!last || last.judged.ok || state.decided) return false;
    return this.#decide(state, last.attempt, last.judged.error);
  }

  /**
   * Asks the policy about a failed attempt and carries out its answer: true to send another
   * attempt (after the backoff it chose, or a token renewal), false once the call's error is set.
   * Also run from the catch for the last attempt, which ky does not ask about (its limit or the
   * total time was spent).
   */
  async #decide(state: CallState, attempt: Attempt, error: MyrGatewayError): Promise<boolean> {
    const cfg = this.#config;
    const { spec, limits } = state;
    state.decided = true;
    const judged = state.last?.judged;
    if (!judged || judged.ok) return false;
    const decision: Decision = decide({
      operation: spec.operation,
      attempt: state.retries + 1,
      outcome: judged.outcome,
      maxRetries: state.maxRetries,
      retry: cfg.retry,
      random: cfg.random(),
      remainingMs: limits.remaining(),
      tokenRenewed: state.tokenRenewed,
    });
    if (decision.action === 'outcome-unknown') {
      state.maybeProcessed = true;
      // An attempt cut by the caller's signal or the total timeout: the error says which of
      // them stopped it, not the attempt timeout that never ran out.
      state.final = attempt.kind === 'timeout' && limits.stopped ? this.#stopped(undefined, state) : this.#outcomeUnknown(spec, error);
      return false;
    }
    if ('maybeProcessed' in decision && decision.maybeProcessed) state.maybeProcessed = true;
    if (limits.stopped) {
      state.final = this.#stopped(undefined, state);
      return false;
    }
    if (decision.action === 'renew-token' && state.token !== undefined && this.#tokens) {
      state.tokenRenewed = true;
      state.renewNext = true;
      state.delayMs = 0;
      return true;
    }
    if (decision.action !== 'retry') {
      if (state.token !== undefined && state.tokenRenewed && isTokenRefusal(error.code)) {
        await this.#tokens?.forget(state.token);
      }
      state.final = error;
      return false;
    }
    state.retries += 1;
    state.delayMs = decision.delayMs;
    state.trace.retry(decision.delayMs);
    return true;
  }

  /**
   * ky's `beforeRequest` and `beforeRetry`: the backoff (a retry), the token (renewed when the
   * policy said so) and the pacing slot, all under the call's own signal and before ky's attempt
   * timeout starts: a wait for a slot never reads as a timeout (for a withdrawal, that would be
   * OUTCOME_UNKNOWN).
   */
  #beforeAttempt(state: CallState | undefined, retry: boolean): Promise<void> | undefined {
    if (!state) return undefined;
    state.preparing = this.#prepare(state, retry);
    return state.preparing;
  }

  async #prepare(state: CallState, retry: boolean): Promise<void> {
    const cfg = this.#config;
    const { spec, limits } = state;
    try {
      if (retry && state.delayMs > 0) await cfg.sleep(state.delayMs, limits.signal);
      this.#throwIfStopped(state);
      if (state.renewNext && state.token !== undefined && this.#tokens) {
        state.renewNext = false;
        await this.#tokens.renew(state.token, limits.signal);
      }
      if (spec.authenticated) state.token = await this.#token(limits);
      // Waiting for a slot happens before anything is sent: it is not a retry.
      if (cfg.pacer) state.paced = await cfg.pacer.acquire(spec.operation, limits.user, limits.remaining(), () => limits.signal);
      state.reported = state.beforeAttempt?.();
    } catch (error) {
      state.final = this.#stopped(error, state);
      throw state.final;
    }
  }

  /** The one translation of what ky threw into the call's error. */
  async #failure(state: CallState, error: unknown): Promise<unknown> {
    // ky's total timeout may fire while a hook still waits (a pacing slot, a token) under the
    // same deadline: that wait's own answer (RATE_LIMITED with its source) is the call's, not a
    // bare TIMEOUT. Every wait in a hook is bounded by the call's deadline, so this one is too.
    await state.preparing?.catch(() => undefined);
    if (state.final !== undefined) return state.final;
    const last = state.last;
    // ky asks `shouldRetry` only while retries and time are left: the last attempt is judged here.
    if (last && !last.judged.ok && !state.decided) {
      await this.#decide(state, last.attempt, last.judged.error);
      if (state.final !== undefined) return state.final;
    }
    // Every attempt's own timeout reached the policy above; a TimeoutError of ky's that gets here
    // is its total timeout, which may fire a little before this deadline's clock passes it.
    if (isTimeoutError(error) && state.limits.user?.aborted !== true) state.limits.spent();
    return this.#stopped(error, state);
  }

  async #token(limits: CallDeadline): Promise<string> {
    const tokens = this.#tokens;
    if (!tokens) throw new AuthenticationError('No token manager configured', { code: 'UNAUTHORIZED' });
    // A cached token needs no signal; the getter builds one only for a refresh.
    return tokens.get(() => limits.signal);
  }

  #throwIfStopped(state: CallState): void {
    if (state.limits.stopped) throw this.#stopped(undefined, state);
  }

  /** The error for a call stopped by the caller's signal or the overall timeout. */
  #stopped(cause: unknown, state: CallState): MyrGatewayError {
    if (cause instanceof MyrGatewayError) return cause;
    const { spec, limits } = state;
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
    if (state.maybeProcessed && isAtMostOnce(spec.operation)) {
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
