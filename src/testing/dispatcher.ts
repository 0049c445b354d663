/**
 * The service seen from the server side: routing, authentication, rate limiting, the
 * four endpoints and fault injection, as one `(Request) => Promise<Response>` function.
 * The msw handlers, `mock.serve()` and the sandbox's node:http server all call it. No msw
 * import here, so the sandbox runs without msw installed. Creating payments and withdrawals
 * (and the status record view) is in `money-endpoints.ts`.
 *
 * @module
 */
import type { DispatchContext } from './dispatch-context.js';
import type { TakenFault } from './faults.js';
import { createMoneyEndpoints, statusView } from './money-endpoints.js';
import { baseHeaders, errorBody, faultAnswer, json, rateLimited, type AnswerContext } from './responses.js';
import type { MerchantState, RateDecision } from './state.js';
import type { Endpoint, MockRateLimits } from './types/options.js';
import type { RecordedRequest } from './types/records.js';
import type { Rejection } from './validation.js';
import { wait as sleep } from '../core/wait.js';

type Bucket = keyof MockRateLimits;

interface Route {
  endpoint: Endpoint | 'unknown';
  identifier?: string;
  /** A known path called with the wrong method. */
  wrongMethod?: boolean;
}

/** The service's answer, and whether the request got past rate limiting and authentication. */
interface Processed {
  response: Response;
  authenticated: boolean;
}

function refused(response: Response): Processed {
  return { response, authenticated: false };
}

/** Which endpoint a method and a path relative to the base URL address. */
export function route(method: string, path: string): Route {
  const m = method.toUpperCase();
  if (path === '/auth/token') return m === 'POST' ? { endpoint: 'auth' } : { endpoint: 'unknown', wrongMethod: true };
  if (path === '/payment/request') {
    return m === 'POST' ? { endpoint: 'payment.create' } : { endpoint: 'unknown', wrongMethod: true };
  }
  if (path === '/payment/withdraw')
    return m === 'POST' ? { endpoint: 'withdraw' } : { endpoint: 'unknown', wrongMethod: true };
  const status = /^\/payment\/status\/([^/]+)$/.exec(path);
  if (status) {
    if (m !== 'GET') return { endpoint: 'unknown', wrongMethod: true };
    let identifier = status[1] as string; // the group of the status pattern always takes part in a match
    try {
      identifier = decodeURIComponent(identifier);
    } catch {
      // keep the raw segment
    }
    return { endpoint: 'payment.status', identifier };
  }
  return { endpoint: 'unknown' };
}

function bucketOf(endpoint: Endpoint | 'unknown'): Bucket {
  if (endpoint === 'auth') return 'auth';
  if (endpoint === 'payment.create') return 'paymentRequest';
  if (endpoint === 'withdraw') return 'withdraw';
  return 'other';
}

function parseBody(text: string): unknown {
  if (text.length === 0) return undefined;
  try {
    const parsed: unknown = JSON.parse(text);
    return parsed;
  } catch {
    return text;
  }
}

/** Creates the dispatcher over a context. */
export function createDispatcher(ctx: DispatchContext): (request: Request) => Promise<Response> {
  const { options, state, faults } = ctx;
  const { createPayment, createWithdrawal } = createMoneyEndpoints(ctx);

  return async function dispatch(request: Request): Promise<Response> {
    const url = new URL(request.url);
    const fullPath = url.pathname;
    const relative = fullPath.startsWith(options.basePath) ? fullPath.slice(options.basePath.length) || '/' : fullPath;
    const target = route(request.method, relative);
    const text = request.method === 'GET' || request.method === 'HEAD' ? '' : await request.text();
    const body = parseBody(text);
    const headers: Record<string, string> = {};
    request.headers.forEach((value, name) => {
      headers[name.toLowerCase()] = value;
    });
    const recorded: RecordedRequest = {
      endpoint: target.endpoint,
      method: request.method.toUpperCase(),
      path: relative + url.search,
      headers,
      body,
      status: 0,
      at: options.now(),
    };
    ctx.requests.push(recorded);
    const answer = (r: Response): Response => {
      recorded.status = r.type === 'error' ? 0 : r.status;
      return r;
    };
    const context = (): AnswerContext => ({
      correlationId: globalThis.crypto.randomUUID(),
      path: fullPath,
      now: options.now(),
    });
    const limitOf = (): number | undefined =>
      options.rateLimits ? options.rateLimits[bucketOf(target.endpoint)] : undefined;

    // A 'before' fault answers whatever arrives; an 'after' fault stands for "the service did
    // it, the answer was lost", so only a request the service would have processed takes it.
    const before = (f: TakenFault) => f.when === 'before';
    let fault = faults.take(target.endpoint, before);
    while (fault?.response.type === 'delay') {
      await sleep(fault.response.ms);
      fault = faults.take(target.endpoint, before);
    }
    if (fault) return answer(faultAnswer(fault.response, context(), limitOf()));

    // A queue in front of the service's counter: the request is counted (and answered) later.
    const countDelay = options.rateCountDelay?.();
    if (countDelay !== undefined && countDelay > 0) await sleep(countDelay);
    const processed = process(target, body, request.headers.get('authorization'), context());
    const after = processed.authenticated ? faults.take(target.endpoint, (f) => f.when === 'after') : undefined;
    if (after?.response.type === 'delay') {
      await sleep(after.response.ms);
      return answer(processed.response);
    }
    if (after) return answer(faultAnswer(after.response, context(), limitOf()));
    return answer(processed.response);
  };

  function rate(key: string, endpoint: Endpoint | 'unknown', now: number): RateDecision | undefined {
    if (!options.rateLimits) return undefined;
    const bucket = bucketOf(endpoint);
    return state.rateCheck(`${bucket}:${key}`, options.rateLimits[bucket], now, options.rateLimitWindowMs);
  }

  function process(target: Route, body: unknown, authorization: string | null, ac: AnswerContext): Processed {
    const now = ac.now;
    if (target.endpoint === 'auth') {
      const merchantId = isRecord(body) && typeof body.merchant_id === 'string' ? body.merchant_id : undefined;
      const decision = rate(merchantId ?? 'anonymous', 'auth', now);
      const h = baseHeaders(ac, decision);
      if (decision && !decision.allowed) return refused(tooMany(ac, h, decision));
      const response = authenticate(body, h);
      return { response, authenticated: response.status === 200 };
    }

    const token = parseBearer(authorization);
    const tokenState = token === undefined ? undefined : state.tokens.get(token);
    const decision = rate(tokenState?.merchantId ?? 'anonymous', target.endpoint, now);
    const h = baseHeaders(ac, decision);
    if (decision && !decision.allowed) return refused(tooMany(ac, h, decision));

    if (target.endpoint === 'unknown') {
      return refused(
        target.wrongMethod
          ? json(405, errorBody('METHOD_NOT_ALLOWED', 'Method not allowed on this path'), h)
          : json(404, errorBody('NOT_FOUND', 'No such endpoint'), h),
      );
    }
    if (!tokenState) return refused(json(401, errorBody('UNAUTHORIZED', 'Missing or invalid access token'), h));
    if (tokenState.revoked || now >= tokenState.expiresAt) {
      return refused(json(401, errorBody('TOKEN_EXPIRED', 'Access token expired'), h));
    }
    const merchant = state.merchants.get(tokenState.merchantId);
    if (!merchant) return refused(json(401, errorBody('UNAUTHORIZED', 'Missing or invalid access token'), h));
    const blocked = merchantBlocked(merchant);
    if (blocked) return refused(json(blocked.status, errorBody(blocked.code, blocked.message), h));

    return { response: answerAuthenticated(target, merchant, body, h, now), authenticated: true };
  }

  /** The three endpoints behind authentication; `process` has routed auth and unknown paths away. */
  function answerAuthenticated(
    target: Route,
    merchant: MerchantState,
    body: unknown,
    h: Record<string, string>,
    now: number,
  ): Response {
    switch (target.endpoint) {
      case 'payment.create':
        return createPayment(merchant, body, h, now);
      case 'withdraw':
        return createWithdrawal(merchant, body, h, now);
      default: {
        const record = state.applyExpiry(state.lookup(merchant.merchantId, target.identifier ?? ''), now);
        if (!record) return json(404, errorBody('NOT_FOUND', 'No payment matches this identifier'), h);
        return json(200, { status: 'success', data: statusView(record) }, h);
      }
    }
  }

  function tooMany(ac: AnswerContext, h: Record<string, string>, decision: RateDecision): Response {
    return rateLimited(ac, options.rateLimitShape, { ...h, 'Retry-After': String(decision.retryAfter) });
  }

  function authenticate(body: unknown, h: Record<string, string>): Response {
    if (!isRecord(body) || !nonEmpty(body.merchant_id) || !nonEmpty(body.api_key)) {
      return json(400, errorBody('VALIDATION_ERROR', 'merchant_id and api_key are required strings'), h);
    }
    const merchant = state.merchants.get(body.merchant_id);
    if (!merchant || merchant.apiKey !== body.api_key) {
      return json(401, errorBody('INVALID_CREDENTIALS', 'Invalid merchant_id or api_key'), h);
    }
    const blocked = merchantBlocked(merchant);
    if (blocked) return json(blocked.status, errorBody(blocked.code, blocked.message), h);
    const expiresIn = options.tokenTtlSeconds;
    const accessToken = state.issueToken(merchant.merchantId, options.now() + expiresIn * 1000);
    return json(
      200,
      { status: 'success', data: { access_token: accessToken, token_type: 'Bearer', expires_in: expiresIn } },
      h,
    );
  }
}

function merchantBlocked(merchant: MerchantState): Rejection | undefined {
  if (merchant.status === 'DISABLED')
    return { status: 403, code: 'MERCHANT_DISABLED', message: 'Merchant account disabled' };
  if (merchant.status === 'LOCKED') return { status: 403, code: 'MERCHANT_LOCKED', message: 'Merchant account locked' };
  return undefined;
}

function parseBearer(header: string | null): string | undefined {
  if (!header) return undefined;
  const match = /^Bearer\s+(\S+)\s*$/i.exec(header);
  return match?.[1];
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function nonEmpty(value: unknown): value is string {
  return typeof value === 'string' && value.length > 0;
}
