/**
 * The transport: one ky instance, the bearer token, attempts with per-attempt and overall
 * timeouts, the retry loop, Retry-After, rate-limit headers, and error mapping.
 * Resources describe a call ({@link CallSpec}); this module decides whether an attempt
 * may be sent again.
 *
 * @module
 */
import ky, { type KyInstance } from 'ky';
import type { TokenAttemptHook, TokenManager } from './auth.js';
import type { TokenAttemptReport } from './token-shared.js';
import { connectionError, errorFromResponse } from './error-mapping.js';
import {
  AbortError,
  AuthenticationError,
  InvalidRequestError,
  MyrGatewayError,
  OutcomeUnknownError,
  TimeoutError,
} from './errors.js';
import { type RateLimitInfo, readRateLimit } from './rate-limit.js';
import { backoffDelay, isNotSentCode, parseRetryAfter, type ResolvedRetryOptions } from './retry.js';

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

/**
 * How a call may be repeated when an attempt may have reached the service:
 * - `idempotent`: reading or authenticating; any retryable failure is retried.
 * - `reconcile`: payment create; retried, and a later DUPLICATE_REFERENCE is reconciled
 *   by the caller through `state.maybeProcessed`.
 * - `at-most-once`: withdrawal; never repeated once it may have reached the service.
 */
export type RepeatPolicy = 'idempotent' | 'reconcile' | 'at-most-once';

/** One API call as a resource describes it. */
export interface CallSpec {
  method: 'GET' | 'POST';
  /** Path below the base URL, without a leading slash. */
  path: string;
  body?: unknown;
  /** Whether the call carries the bearer token. */
  authenticated: boolean;
  repeat: RepeatPolicy;
  /** For error messages of money-moving calls. */
  referenceId?: string;
}

/** Mutable facts about a call that the resource reads after it failed. */
export interface CallState {
  /** An earlier attempt may have been processed by the service. */
  maybeProcessed: boolean;
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
}

type Attempt =
  | { kind: 'response'; response: Response; text: string }
  | { kind: 'network'; systemCode: string | undefined; notSent: boolean }
  | { kind: 'timeout' };

/** Longest delay a timer can take (2^31 - 1 ms, about 24.8 days). */
export const MAX_TIMER_MS = 2_147_483_647;

/** A per-call millisecond option: a positive integer a timer can hold, or the default. */
function checkMs(value: number | undefined, fallback: number, field: string): number {
  if (value === undefined) return fallback;
  if (!Number.isInteger(value) || value <= 0 || value > MAX_TIMER_MS) {
    throw new InvalidRequestError(`VALIDATION_ERROR: ${field} must be a whole number of milliseconds from 1 to ${MAX_TIMER_MS}`, {
      code: 'VALIDATION_ERROR',
      field,
    });
  }
  return value;
}

function checkCount(value: number | undefined, fallback: number, field: string): number {
  if (value === undefined) return fallback;
  if (!Number.isInteger(value) || value < 0 || value > 10) {
    throw new InvalidRequestError(`VALIDATION_ERROR: ${field} must be a whole number from 0 to 10`, { code: 'VALIDATION_ERROR', field });
  }
  return value;
}

/**
 * What stops a call: the caller's signal and the overall deadline, in real time
 * (performance.now, unaffected by an injected clock or wall-clock jumps).
 */
class CallLimits {
  readonly user: AbortSignal | undefined;
  readonly #endsAt: number;
  #signal: AbortSignal | undefined;

  constructor(user: AbortSignal | undefined, totalMs: number) {
    this.user = user;
    this.#endsAt = performance.now() + totalMs;
  }

  /** Milliseconds left before the overall deadline. */
  remaining(): number {
    return this.#endsAt - performance.now();
  }

  get expired(): boolean {
    // The deadline timer can fire a fraction of a millisecond before performance.now() passes it.
    return this.remaining() <= 0 || (this.#signal?.aborted === true && this.user?.aborted !== true);
  }

  get stopped(): boolean {
    return this.user?.aborted === true || this.expired;
  }

  /** One signal for the slow paths (token refresh, backoff waits), built on first use. */
  get signal(): AbortSignal {
    if (!this.#signal) {
      const deadline = AbortSignal.timeout(Math.max(1, Math.ceil(this.remaining())));
      this.#signal = this.user ? AbortSignal.any([this.user, deadline]) : deadline;
    }
    return this.#signal;
  }
}

/** Walks a cause chain for the first system error code (ECONNREFUSED, UND_ERR_SOCKET, …). */
function systemCodeOf(error: unknown): string | undefined {
  let current: unknown = error;
  for (let depth = 0; depth < 6 && current !== null && typeof current === 'object'; depth++) {
    const code = (current as { code?: unknown }).code;
    if (typeof code === 'string') return code;
    current = (current as { cause?: unknown }).cause;
  }
  return undefined;
}

/** What the token limiter needs to know of an attempt: whether the server may have seen it. */
function attemptReport(attempt: Attempt, now: number): TokenAttemptReport {
  if (attempt.kind === 'timeout') return { sent: true };
  if (attempt.kind === 'network') return { sent: !attempt.notSent };
  const { status, headers } = attempt.response;
  return { sent: true, status, retryAfterMs: status === 429 ? parseRetryAfter(headers.get('retry-after'), now) : undefined };
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
    const cfg = this.#config;
    const maxRetries = checkCount(options.maxRetries, cfg.retry.maxRetries, 'maxRetries');
    const limits = new CallLimits(options.signal, checkMs(options.totalTimeout, cfg.totalTimeout, 'totalTimeout'));
    const attemptTimeout = checkMs(options.timeout, cfg.timeout, 'timeout');
    const body = spec.body === undefined ? undefined : JSON.stringify(spec.body);
    let retries = 0;
    let renewedToken = false;

    for (;;) {
      this.#throwIfStopped(limits, spec, state);
      let token: string | undefined;
      if (spec.authenticated) {
        token = await this.#token(limits, spec, state);
      }
      const report = beforeAttempt?.();
      const attempt = await this.#attempt(spec, body, token, attemptTimeout, limits);
      report?.(attemptReport(attempt, cfg.now()));
      const outcome = this.#judge(attempt, attemptTimeout, token);

      if (outcome.ok) return outcome.data;
      if (outcome.maybeProcessed) state.maybeProcessed = true;
      this.#throwIfStopped(limits, spec, state);

      const error = outcome.error;

      // A 401 is answered before processing. TOKEN_EXPIRED, or UNAUTHORIZED for a cached token the
      // service no longer knows, gets one fresh token and one more attempt; after that it is final.
      if ((error.code === 'TOKEN_EXPIRED' || error.code === 'UNAUTHORIZED') && token !== undefined && this.#tokens) {
        if (renewedToken) {
          await this.#tokens.forget(token);
          throw error;
        }
        renewedToken = true;
        await this.#tokens.renew(token, limits.signal).catch((e: unknown) => {
          throw this.#stopped(e, limits, spec, state);
        });
        continue;
      }

      if (outcome.maybeProcessed && spec.repeat === 'at-most-once') {
        throw new OutcomeUnknownError(
          `The ${spec.method} /${spec.path} request for reference_id ${spec.referenceId ?? '(none)'} may have reached ` +
            `the service (${error.message}); it was not retried because a second attempt could move money twice. ` +
            `Check with payments.retrieve(referenceId) or wait for the callback before sending it again.`,
          {
            referenceId: spec.referenceId ?? '',
            status: error.status,
            correlationId: error.correlationId,
            cause: error,
          },
        );
      }
      if (!error.retryable || retries >= maxRetries) throw error;

      retries += 1;
      const asked = error.retryAfter === undefined ? undefined : error.retryAfter * 1000;
      const delay = asked ?? backoffDelay(retries, cfg.retry, cfg.random);
      if (asked !== undefined && asked > cfg.retry.maxDelayMs) throw error;
      if (delay >= limits.remaining()) throw error;
      try {
        await cfg.sleep(delay, limits.signal);
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

  async #attempt(
    spec: CallSpec,
    body: string | undefined,
    token: string | undefined,
    attemptTimeout: number,
    limits: CallLimits,
  ): Promise<Attempt> {
    // One controller and one cleared timer per attempt, rather than AbortSignal.timeout/any:
    // those stay alive until GC finalizers run, a measurable cost per request under load.
    const controller = new AbortController();
    const signal = controller.signal;
    let timedOut = false;
    const timer = setTimeout(
      () => {
        timedOut = true;
        controller.abort();
      },
      Math.max(1, Math.min(attemptTimeout, Math.ceil(limits.remaining()))),
    );
    const user = limits.user;
    const onAbort = () => controller.abort(user?.reason);
    if (user?.aborted) onAbort();
    else user?.addEventListener('abort', onAbort, { once: true });
    const headers: Record<string, string> = {};
    if (token !== undefined) headers.authorization = `Bearer ${token}`;
    if (body !== undefined) headers['content-type'] = 'application/json';
    try {
      const response = await this.#ky(spec.path, {
        method: spec.method,
        headers,
        ...(body === undefined ? {} : { body }),
        signal,
      });
      const text = await response.text();
      return { kind: 'response', response, text };
    } catch (error) {
      if (limits.stopped || timedOut) return { kind: 'timeout' }; // the caller decides which limit it was
      const systemCode = systemCodeOf(error);
      return { kind: 'network', systemCode, notSent: isNotSentCode(systemCode) };
    } finally {
      clearTimeout(timer);
      user?.removeEventListener('abort', onAbort);
    }
  }

  #judge(
    attempt: Attempt,
    attemptTimeout: number,
    token: string | undefined,
  ): { ok: true; data: unknown } | { ok: false; error: MyrGatewayError; maybeProcessed: boolean } {
    const cfg = this.#config;
    if (attempt.kind === 'timeout') {
      return {
        ok: false,
        maybeProcessed: true,
        error: new TimeoutError(`TIMEOUT: no answer from the service within ${attemptTimeout} ms for this attempt`, {
          code: 'TIMEOUT',
          retryable: true,
        }),
      };
    }
    if (attempt.kind === 'network') {
      return {
        ok: false,
        maybeProcessed: !attempt.notSent,
        error: connectionError(attempt.systemCode, attempt.notSent ? 'not_sent' : 'maybe'),
      };
    }
    const { response, text } = attempt;
    const rateLimit = readRateLimit(response.headers, cfg.now());
    if (rateLimit) this.#rateLimit = rateLimit;
    if (response.ok) {
      try {
        return { ok: true, data: JSON.parse(text) };
      } catch {
        // Not JSON: hand the text on; the resource's envelope check reports it.
        return { ok: true, data: text };
      }
    }
    const error = errorFromResponse(
      {
        status: response.status,
        headers: response.headers,
        text,
        retryAfterMs: parseRetryAfter(response.headers.get('retry-after'), cfg.now()),
      },
      // The token of this attempt may come from a shared store this instance never fetched into.
      token === undefined ? cfg.redact : (text) => cfg.redact(text).split(token).join('[redacted]'),
    );
    // 429, 401 and NO_GATEWAY_AVAILABLE are answered before any processing; other 5xx may not be.
    const certainlyNotProcessed = response.status < 500 || error.code === 'NO_GATEWAY_AVAILABLE';
    return { ok: false, error, maybeProcessed: !certainlyNotProcessed };
  }

  #throwIfStopped(limits: CallLimits, spec: CallSpec, state: CallState): void {
    if (limits.stopped) throw this.#stopped(undefined, limits, spec, state);
  }

  /** The error for a call stopped by the caller's signal or the overall timeout. */
  #stopped(cause: unknown, limits: CallLimits, spec: CallSpec, state: CallState): MyrGatewayError {
    if (cause instanceof MyrGatewayError) return cause;
    const maybe = state.maybeProcessed && spec.repeat === 'reconcile'
      ? `; an attempt may have reached the service, so look it up by reference_id ${spec.referenceId ?? ''} before sending it again`
      : '';
    const error = limits.user?.aborted
      ? new AbortError(`ABORTED: the call was aborted by its signal${maybe}`, { code: 'ABORTED' })
      : limits.expired
        ? new TimeoutError(`TIMEOUT: the call did not finish within its total timeout${maybe}`, {
            code: 'TIMEOUT',
            retryable: true,
          })
        : new MyrGatewayError('The call stopped unexpectedly', { code: 'HTTP_ERROR' });
    if (spec.repeat === 'at-most-once' && state.maybeProcessed) {
      return new OutcomeUnknownError(
        `The withdrawal ${spec.referenceId ?? ''} was stopped (${error.code}) after a request that may have reached the service; ` +
          `check with payments.retrieve(referenceId) or wait for the callback before sending it again.`,
        { referenceId: spec.referenceId ?? '', cause: error },
      );
    }
    return error;
  }
}
