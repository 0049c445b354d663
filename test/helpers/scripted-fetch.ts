/**
 * A scripted `fetch` for the unit tests of the client and its resources: it answers the token
 * request itself, every other request from a list, and records them all. With it come builders
 * for the service's answers (the spec's envelopes, a dropped connection, an answer that never
 * comes) and a client wired to it with nothing that waits or is shared: instant recorded
 * backoff, no jitter, a fixed clock, a merchant id of its own, its own token cache, no pacing.
 */
import { vi } from 'vitest';
import { MemoryTokenStore, MyrGateway, type MyrGatewayOptions } from '../../src/index.js';
import { recordingSleep } from './client.js';

/** The base URL every scripted client is given. */
export const BASE = 'https://gw.test';

/** The api key every scripted client is given (unless a test passes its own). */
export const API_KEY = 'sk_test_scripted_5f0c2a9d41e7';

/** The fixed time every scripted client's clock reads. */
export const NOW = Date.parse('2026-11-24T08:00:00.000Z');

/** A request as the scripted fetch saw it. */
export interface SentRequest {
  url: string;
  method: string;
  /** The headers, as the plain object the SDK passes. */
  headers: Record<string, string>;
  /** The init the fetch was called with (`{}` when none). */
  init: RequestInit;
  /** The raw body text, and the body parsed as JSON. */
  text: string | undefined;
  body: unknown;
}

/**
 * One scripted answer: a response, an error the fetch throws, or a function of the request and
 * the attempt's signal (for an answer that depends on them, or never comes: {@link hang}).
 */
export type ScriptedAnswer =
  Response | Error | ((request: SentRequest, signal: AbortSignal | undefined) => Response | Promise<Response>);

/** A JSON response with `status`, `body` and any further headers. */
export const json = (status: number, body: unknown, headers: Record<string, string> = {}) =>
  new Response(JSON.stringify(body), { status, headers: { 'content-type': 'application/json', ...headers } });

/** The spec's success envelope around `data`. */
export const success = (data: unknown, status = 200, headers: Record<string, string> = {}) =>
  json(status, { status: 'success', data }, headers);

/** The spec's error envelope for `code`, with the correlation id `corr-<code>`. */
export const failure = (
  status: number,
  code: string,
  message = `${code} happened`,
  headers: Record<string, string> = {},
) => json(status, { status: 'error', error: code, message, correlationId: `corr-${code}` }, headers);

/** A connection failure as undici reports it: a TypeError whose cause carries the system code (none without `code`). */
export const dropped = (code?: string) =>
  Object.assign(
    new TypeError('fetch failed'),
    code === undefined ? {} : { cause: Object.assign(new Error(code), { code }) },
  );

/** A fetch answer that never comes: it ends only when the attempt's signal aborts. */
export const never = (signal: AbortSignal | undefined) =>
  new Promise<Response>((_resolve, reject) =>
    signal?.addEventListener('abort', () => reject(new DOMException('aborted', 'AbortError')), { once: true }),
  );

/** A scripted answer that never comes ({@link never}). */
export const hang: ScriptedAnswer = (_request, signal) => never(signal);

/** The token answer for the `n`th token request: the spec's, with the access token `tok_<n>`. */
export const issuedToken = (n: number) => success({ access_token: `tok_${n}`, token_type: 'Bearer', expires_in: 3600 });

const isTokenRequest = (request: SentRequest) => request.url.endsWith('/auth/token');

/**
 * A fetch (a vitest mock) answering every `…/auth/token` request itself with `tokenAnswer(n)`
 * for the `n`th (by default tok_1, tok_2, …) and every other request from `answers`, in order; a
 * request beyond them fails the test. `sent` holds every request, `calls()` those other than the
 * token's.
 */
export function scriptedFetch(answers: ScriptedAnswer[] = [], tokenAnswer: (n: number) => Response = issuedToken) {
  const sent: SentRequest[] = [];
  const queue = [...answers];
  let tokens = 0;
  const fetch = vi.fn(async (input: string | URL | Request, init?: RequestInit): Promise<Response> => {
    const text = typeof init?.body === 'string' ? init.body : undefined;
    const request: SentRequest = {
      url: typeof input === 'string' ? input : input instanceof URL ? input.href : input.url,
      method: init?.method ?? 'GET',
      headers: { ...(init?.headers as Record<string, string>) },
      init: init ?? {},
      text,
      body: text === undefined ? undefined : JSON.parse(text),
    };
    sent.push(request);
    if (isTokenRequest(request)) {
      tokens += 1;
      return tokenAnswer(tokens);
    }
    const next = queue.shift();
    if (next === undefined) throw new Error(`unscripted request ${request.method} ${request.url}`);
    if (next instanceof Error) throw next;
    return typeof next === 'function' ? next(request, init?.signal ?? undefined) : next;
  });
  const calls = () => sent.filter((request) => !isTokenRequest(request));
  return { fetch, sent, calls };
}

/** What {@link scriptedFetch} returns. */
export type ScriptedFetch = ReturnType<typeof scriptedFetch>;

let merchants = 0;

/**
 * Options for a client on `fetch` (none: globalThis.fetch) at {@link BASE}, with a merchant id of
 * its own (no 20-clients warning), {@link API_KEY}, an instant sleep, no jitter, the clock fixed
 * at {@link NOW}, its own token cache and no pacing; `over` replaces any of them.
 */
export function gatewayOptions(
  fetch: typeof globalThis.fetch | undefined,
  over: Partial<MyrGatewayOptions> = {},
): MyrGatewayOptions {
  merchants += 1;
  return {
    baseUrl: BASE,
    merchantId: `M_SCRIPTED_${merchants}`,
    apiKey: API_KEY,
    ...(fetch ? { fetch } : {}),
    sleep: recordingSleep().sleep,
    random: () => 0,
    now: () => NOW,
    tokenStore: new MemoryTokenStore(),
    rateLimiter: false,
    ...over,
  };
}

/** A client on the scripted fetch with {@link gatewayOptions}; `sleeps` records every backoff it asked for. */
export function gatewayOn(fake: Pick<ScriptedFetch, 'fetch'>, over: Partial<MyrGatewayOptions> = {}) {
  const recorder = recordingSleep();
  const options = gatewayOptions(fake.fetch, { sleep: recorder.sleep, ...over });
  return { client: new MyrGateway(options), sleeps: recorder.delays };
}
