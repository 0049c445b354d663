/**
 * One attempt of a call: send it (with its own timeout, tied to the caller's signal and the
 * call's overall limit), then judge what came back, a parsed body or a typed error plus the
 * outcome the retry policy decides on. The loop around attempts is in `transport.ts`.
 *
 * @module
 */
import type { CallLimits } from './call-limits.js';
import { errorFromResponse } from './errors/from-response.js';
import { connectionError, type ConnectionStage, connectionStage, systemCodeOf } from './errors/connection.js';
import { alsoRedact, type Redact } from './redact.js';
import type { MyrGatewayError } from './errors/base.js';
import { isRetryable, type Outcome } from './policy.js';
import { type RateLimitInfo, readRateLimit } from './pacing/rate-limit-headers.js';
import { parseRetryAfter } from './retry.js';
import { TimeoutError } from './errors/service.js';
import type { TokenAttemptReport } from './tokens/shared.js';

/** The request line of an attempt. */
export interface AttemptRequest {
  method: 'GET' | 'POST';
  /** Path below the base URL, without a leading slash. */
  path: string;
}

/** Where attempts are sent, and with which fetch: fixed per client (built by the transport). */
export interface Endpoint {
  /** The base URL without trailing slashes; a call's path follows it after one `/`. */
  readonly base: string;
  /** The `User-Agent` header of every request. */
  readonly userAgent: string;
  /** The merchant's fetch; undefined: `globalThis.fetch`, looked up per request (msw and instrumentation patch it late). */
  readonly fetch: typeof globalThis.fetch | undefined;
}

/** The transport settings judging an attempt needs. */
export interface JudgeSettings {
  now: () => number;
  redact: Redact;
}

/**
 * A judged attempt: the body of a 2xx answer, or the error and the outcome for the retry
 * policy; with the answer's `X-RateLimit-*` headers when it carried them (read once here,
 * for the client's `rateLimit` and the call's trace).
 */
export type Judgement = ({ ok: true; data: unknown; status: number } | { ok: false; error: MyrGatewayError; outcome: Outcome }) & {
  rateLimit?: RateLimitInfo | undefined;
};

/** How one attempt ended. */
export type Attempt =
  | { kind: 'response'; response: Response; text: string }
  | { kind: 'network'; systemCode: string | undefined; stage: ConnectionStage }
  | { kind: 'timeout' };

/** What the token limiter needs to know of an attempt: whether the server may have seen it. */
export function attemptReport(attempt: Attempt, now: number): TokenAttemptReport {
  if (attempt.kind === 'timeout') return { sent: true };
  if (attempt.kind === 'network') return { sent: attempt.stage === 'exchange' };
  const { status, headers } = attempt.response;
  return { sent: true, status, retryAfterMs: status === 429 ? parseRetryAfter(headers.get('retry-after'), now) : undefined };
}

/**
 * Sends one attempt, bounded by the attempt timeout and what is left of the call. Straight to
 * fetch: retries, timeouts, redirects and error statuses are all decided here and in the
 * transport, so a general-purpose wrapper (ky) only added per-request work (option merging,
 * a second signal, a failed cancel of the sent body that builds an error every request).
 */
export async function sendAttempt(
  endpoint: Endpoint,
  spec: AttemptRequest,
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
  const headers: Record<string, string> = { accept: 'application/json', 'user-agent': endpoint.userAgent };
  if (token !== undefined) headers.authorization = `Bearer ${token}`;
  if (body !== undefined) headers['content-type'] = 'application/json';
  try {
    // The URL and an init, not a Request: fetch builds its own Request from either, and one built
    // from a Request with a body re-streams that body (an identity transform), a cost every POST
    // paid over a real socket. Redirects are not followed: one would re-send the body (the api_key
    // on /auth/token) and the bearer token to whatever host the Location names, http://
    // included; a 3xx answer is an error instead.
    const url = `${endpoint.base}/${spec.path}`;
    const response = await (endpoint.fetch ?? globalThis.fetch)(url, { method: spec.method, headers, body: body ?? null, signal, redirect: 'manual' });
    const text = await response.text();
    return { kind: 'response', response, text };
  } catch (error) {
    if (limits.stopped || timedOut) return { kind: 'timeout' }; // the caller decides which limit it was
    const systemCode = systemCodeOf(error);
    return { kind: 'network', systemCode, stage: connectionStage(systemCode) };
  } finally {
    clearTimeout(timer);
    user?.removeEventListener('abort', onAbort);
  }
}

/** What an attempt means: the parsed body, or the error and the outcome the retry policy judges. */
export function judgeAttempt(
  attempt: Attempt,
  attemptTimeout: number,
  token: string | undefined,
  cfg: JudgeSettings,
): Judgement {
  if (attempt.kind === 'timeout') {
    return {
      ok: false,
      outcome: { kind: 'timeout' },
      error: new TimeoutError(`TIMEOUT: no answer from the service within ${attemptTimeout} ms for this attempt`, {
        code: 'TIMEOUT',
        retryable: true,
      }),
    };
  }
  if (attempt.kind === 'network') {
    const outcome: Outcome = { kind: 'network', stage: attempt.stage };
    return { ok: false, outcome, error: connectionError(attempt.systemCode, attempt.stage, isRetryable(outcome)) };
  }
  const { response, text } = attempt;
  const rateLimit = readRateLimit(response.headers, cfg.now());
  if (response.ok) {
    try {
      return { ok: true, data: JSON.parse(text), status: response.status, rateLimit };
    } catch {
      // Not JSON: hand the text on; the resource's envelope check reports it.
      return { ok: true, data: text, status: response.status, rateLimit };
    }
  }
  const error = errorFromResponse(
    {
      status: response.status,
      headers: response.headers,
      text,
      retryAfterMs: parseRetryAfter(response.headers.get('retry-after'), cfg.now()),
      url: response.url,
    },
    alsoRedact(cfg.redact, token),
  );
  const retryAfterMs = error.retryAfter === undefined ? undefined : error.retryAfter * 1000;
  const resetInMs = rateLimit?.reset === undefined ? undefined : rateLimit.reset * 1000 - cfg.now();
  return { ok: false, error, outcome: { kind: 'http', status: response.status, code: String(error.code), retryAfterMs, resetInMs }, rateLimit };
}
