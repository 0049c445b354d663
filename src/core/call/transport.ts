/**
 * The transport: ky runs every call (one `ky.create` per client): its attempt timeout, its total
 * timeout, its retries and its hooks. This module starts a call and hands ky the SDK's answers:
 * - `shouldRetry` is `retry-decision.ts`, which asks `retry-policy.ts` about the attempt just judged;
 * - `beforeRequest`/`beforeRetry` and the translation of what ky threw are `ky-hooks.ts`;
 * - ky's `fetch` is one wrapper, here, that sends each attempt and sees its answer or failure
 *   once (`attempt.ts`: judged, reported to the pacer, the token limiter, `rateLimit` and the trace).
 * Resources describe a call ({@link CallSpec}); what a call has learned is its `CallState`.
 *
 * @module
 */
import ky from 'ky';
import type { TokenAttemptHook, TokenManager } from '../tokens/manager.js';
import { type Attempt, attemptReport, type Endpoint, judgeAttempt, sendAttempt } from './attempt.js';
import { CallDeadline } from './call-deadline.js';
import type { CallAnswer, CallOutcome, CallSpec, RequestOptions } from './call-spec.js';
import { CallState } from './call-state.js';
import { stoppedError } from './call-errors.js';
import { kyFailure, kyHooks } from './ky-hooks.js';
import { shouldRetry } from './retry-decision.js';
import { millisecondsSetting, retriesSetting, signalSetting } from '../settings.js';
import type { Pacer } from '../pacing/pacer.js';
import type { RateLimitInfo } from '../pacing/rate-limit-headers.js';
import type { ResolvedRetryOptions } from './retry-options.js';
import { CallTrace, type Observer } from '../observe/observer.js';
import { bothRedact } from '../redact.js';

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
  /** What the hooks and the retry decision use; `tokens` is wired by {@link useTokens}. */
  readonly #env: { config: TransportConfig; tokens: TokenManager | undefined };
  readonly #endpoint: Endpoint;
  readonly #ky: typeof ky;
  #rateLimit: RateLimitInfo | undefined;

  constructor(config: TransportConfig) {
    this.#config = config;
    this.#env = { config, tokens: undefined };
    this.#endpoint = { userAgent: config.userAgent, fetch: config.fetch };
    // The backoff is waited in beforeRetry with the client's `sleep`, so ky's own delay is 0:
    // `sleep` keeps its meaning (merchants' tests make it instant or record it), and the wait is
    // bounded by the call's signal and total timeout like every other wait of a call.
    this.#ky = ky.create({ prefix: config.baseUrl, redirect: 'manual', hooks: kyHooks(this.#env) });
  }

  /** Wires the token manager (it needs this transport for its own requests). */
  useTokens(tokens: TokenManager): void {
    this.#env.tokens = tokens;
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
  async outcomeOf(
    spec: CallSpec,
    options: RequestOptions = {},
    beforeAttempt?: TokenAttemptHook,
  ): Promise<CallOutcome> {
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
      const answer = observer.traced()
        ? await observer.run(spec, observed)
        : await observed(new CallTrace(observer, spec, undefined));
      return { ok: true, data: answer.data, response: answer.response };
    } catch (error) {
      return {
        ok: false,
        error,
        maybeProcessed: state?.maybeProcessed ?? false,
        remainingMs: Math.max(0, state?.limits.remaining() ?? 0),
      };
    }
  }

  #start(
    spec: CallSpec,
    options: RequestOptions,
    trace: CallTrace,
    beforeAttempt: TokenAttemptHook | undefined,
  ): CallState {
    const cfg = this.#config;
    const maxRetries = retriesSetting(options.maxRetries, cfg.retry.maxRetries, 'maxRetries', 'call');
    const limits = new CallDeadline(
      signalSetting(options.signal),
      millisecondsSetting(options.totalTimeout, cfg.totalTimeout, 'totalTimeout', 'call'),
    );
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
        retry: {
          limit: state.maxRetries + 1,
          methods: RETRIED_METHODS,
          shouldRetry: () => shouldRetry(state, this.#env),
          delay: () => 0,
        },
        context: { call: state },
        // ky hands its fetch the Request it built (prefix + path, its signal).
        fetch: (request) =>
          request instanceof Request
            ? this.#attempt(state, request)
            : Promise.reject(new TypeError('ky passed no Request')),
      });
    } catch (error) {
      throw await kyFailure(state, error, this.#env);
    } finally {
      // A slot taken for an attempt that was never sent (the call stopped first) is given back.
      state.paced?.(undefined);
      state.paced = undefined;
    }
    const judged = state.last?.judged;
    if (!judged?.ok) throw stoppedError(undefined, state);
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
    const attempt = await sendAttempt(
      this.#endpoint,
      { url: request.url, method: state.spec.method, body: state.body, token: state.token },
      signal,
      this.#config.now,
    );
    end(attempt);
    if (attempt.kind === 'response') return attempt.response;
    throw attempt.kind === 'network' ? attempt.raw : signal.reason;
  }

  /** Reports an attempt that is over, and judges it for the policy (once). */
  #judged(state: CallState, attempt: Attempt): void {
    state.reported?.(attemptReport(attempt));
    state.reported = undefined;
    state.paced?.(
      attempt.kind === 'response' ? { status: attempt.response.status, timing: attempt.timing } : undefined,
    );
    state.paced = undefined;
    const judged = judgeAttempt(attempt, state.attemptTimeout, state.token, state.judge);
    if (judged.rateLimit) this.#rateLimit = judged.rateLimit;
    state.trace.response(
      attempt.kind === 'response' ? attempt.response : undefined,
      judged.ok ? undefined : judged.error,
      judged.rateLimit,
    );
    state.last = { attempt, judged };
    state.decided = false;
  }
}
