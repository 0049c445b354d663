/**
 * One attempt of a call: send it with the merchant's fetch, then judge what came back, a parsed
 * body or a typed error plus the outcome the retry policy decides on. ky runs the attempts (its
 * timeouts, its retries); the transport hands it the wrapper that calls this.
 *
 * @module
 */
import { errorFromResponse } from '../errors/from-response.js';
import { connectionError, type ConnectionStage, connectionStage, systemErrorOf } from '../errors/connection.js';
import { alsoRedact, type Redact } from '../redact.js';
import type { MyrGatewayError } from '../errors/base.js';
import { isRetryable, type AttemptFailure } from './retry-policy.js';
import type { AnswerTiming, RateLimitInfo } from '../pacing/rate-limit-headers.js';
import { readAnswerTiming } from '../pacing/rate-limit-headers.js';
import { TimeoutError } from '../errors/service.js';
import type { TokenAttemptReport } from '../tokens/shared.js';

/** Where attempts are sent, and with which fetch: fixed per client (built by the transport). */
export interface Endpoint {
  /** The `User-Agent` header of every request. */
  readonly userAgent: string;
  /** The merchant's fetch; undefined: `globalThis.fetch`, looked up per request (msw and instrumentation patch it late). */
  readonly fetch: typeof globalThis.fetch | undefined;
}

/** What one attempt sends: the URL ky built (prefix and path), the method, the body and the token. */
export interface AttemptRequest {
  url: string;
  method: string;
  body: string | undefined;
  token: string | undefined;
}

/** The transport settings judging an attempt needs. */
export interface JudgeSettings {
  redact: Redact;
}

/**
 * A judged attempt: the body of a 2xx answer, or the error and the outcome for the retry
 * policy; with the answer's `X-RateLimit-*` headers when it carried them (for the client's
 * `rateLimit` and the call's trace).
 */
export type Judgement = (
  { ok: true; data: unknown; status: number } | { ok: false; error: MyrGatewayError; outcome: AttemptFailure }
) & {
  rateLimit?: RateLimitInfo | undefined;
};

/**
 * How one attempt ended: an answer (its body read), a failed connection (with the raw error, for
 * ky to tell a network error apart), or cut by its signal (ky's attempt timeout, the call's total
 * timeout or the caller's abort: the transport tells which).
 */
export type Attempt =
  | { kind: 'response'; response: Response; text: string; timing: AnswerTiming }
  | { kind: 'network'; systemCode: string | undefined; stage: ConnectionStage; raw?: unknown }
  | { kind: 'timeout' };

/** What the token limiter needs to know of an attempt: whether the server may have seen it. */
export function attemptReport(attempt: Attempt): TokenAttemptReport {
  if (attempt.kind === 'timeout') return { sent: true };
  if (attempt.kind === 'network') return { sent: attempt.stage === 'exchange' };
  const { status } = attempt.response;
  return { sent: true, status, retryAfterMs: status === 429 ? attempt.timing.retryAfterMs : undefined };
}

/**
 * The most of an answer's body that is read, in bytes. The service's answers are records of a few
 * kB; a larger body (a broken upstream's page, a hostile host streaming without end) is cut here
 * instead of being held whole in memory, and then reads as the malformed answer it is.
 */
const MAX_ANSWER_BYTES = 1_048_576;

/** The answer's body as text, its first {@link MAX_ANSWER_BYTES} at most (the rest is not read). */
async function answerText(response: Response): Promise<string> {
  const declared = response.headers.get('content-length');
  if (declared !== null && Number(declared) <= MAX_ANSWER_BYTES) return response.text();
  const reader = response.body?.getReader();
  if (!reader) return '';
  const decoder = new TextDecoder();
  let text = '';
  for (let left = MAX_ANSWER_BYTES; ;) {
    const { done, value } = await reader.read();
    if (done) return text + decoder.decode();
    if (value.byteLength > left) {
      reader.cancel().catch(() => undefined);
      return text + decoder.decode(value.subarray(0, left));
    }
    left -= value.byteLength;
    text += decoder.decode(value, { stream: true });
  }
}

/**
 * Sends one attempt and reads its answer; ky calls this (through the transport's `fetch`) for
 * every attempt, under the signal that carries ky's attempt timeout, the call's total timeout
 * and the caller's abort. The merchant's fetch gets the URL and an init, never ky's Request:
 * fetch builds its own Request from either, and one built from a Request with a body re-streams
 * that body, a cost every POST would pay. Redirects are not followed: one would re-send the body
 * (the api_key on /auth/token) and the bearer token to whatever host the Location names,
 * http:// included; a 3xx answer is an error instead.
 */
export async function sendAttempt(
  endpoint: Endpoint,
  request: AttemptRequest,
  signal: AbortSignal,
  now: () => number,
): Promise<Attempt> {
  const headers: Record<string, string> = { accept: 'application/json', 'user-agent': endpoint.userAgent };
  if (request.token !== undefined) headers.authorization = `Bearer ${request.token}`;
  if (request.body !== undefined) headers['content-type'] = 'application/json';
  try {
    const response = await (endpoint.fetch ?? globalThis.fetch)(request.url, {
      method: request.method,
      headers,
      body: request.body ?? null,
      signal,
      redirect: 'manual',
    });
    const text = await answerText(response);
    // Its timing headers, read once here for everyone who needs them.
    return { kind: 'response', response, text, timing: readAnswerTiming(response.headers, now()) };
  } catch (error) {
    if (signal.aborted) return { kind: 'timeout' }; // the transport decides which limit it was
    const system = systemErrorOf(error);
    return {
      kind: 'network',
      systemCode: system?.code,
      stage: connectionStage(system?.code, system?.message),
      raw: error,
    };
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
    const outcome: AttemptFailure = { kind: 'network', stage: attempt.stage };
    return { ok: false, outcome, error: connectionError(attempt.systemCode, attempt.stage, isRetryable(outcome)) };
  }
  const { response, text, timing } = attempt;
  const { rateLimit, retryAfterMs, resetInMs } = timing;
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
      retryAfterMs,
      url: response.url,
    },
    alsoRedact(cfg.redact, token),
  );
  return {
    ok: false,
    error,
    outcome: { kind: 'http', status: response.status, code: String(error.code), retryAfterMs, resetInMs },
    rateLimit,
  };
}
