/**
 * The service seen from the server side: routing, authentication, rate limiting, the
 * four endpoints and fault injection, as one `(Request) => Promise<Response>` function.
 * The msw handlers, `mock.serve()` and the sandbox's node:http server all call it. No msw
 * import here, so the sandbox runs without msw installed.
 *
 * @module
 */
import type { FaultQueue, TakenFault } from './faults.js';
import {
  baseHeaders,
  errorBody,
  faultAnswer,
  json,
  rateLimited,
  type AnswerContext,
} from './responses.js';
import { randomHex, type MerchantState, type MockRecord, type MockState, type RateDecision } from './state.js';
import type { Endpoint, MockRateLimits } from './types/options.js';
import type {
  MockPaymentRecord,
  MockRecordCommon,
  MockWithdrawalRecord,
  RecordedRequest,
} from './types/records.js';
import { maskAccountNumber, validateDeposit, validateWithdrawal, type Rejection } from './validation.js';

/** Options of the mock after defaults were applied. */
export interface ResolvedOptions {
  baseUrl: string;
  /** Path prefix of `baseUrl`, without a trailing slash (e.g. `/api/v1`). */
  basePath: string;
  production: boolean;
  tokenTtlSeconds: number;
  paymentTtlSeconds: number;
  now: () => number;
  rateLimits: MockRateLimits | false;
  rateLimitShape: 'envelope' | 'nest';
  rateLimitWindowMs: number;
  generateId: (prefix: 'PAY_' | 'WD_') => string;
  /** Origin of the hosted payment pages `payment_url` and `gateway.redirect_url` point to. */
  pageOrigin: string;
  /** `gateway.qr_data_string` of a new payment (null, as in the spec's shown response, by default). */
  qrDataString: (payment: MockPaymentRecord) => string | null;
}

/** What the dispatcher works on. */
export interface DispatchContext {
  options: ResolvedOptions;
  state: MockState;
  faults: FaultQueue;
  requests: RecordedRequest[];
}

/** Page host for payment and gateway URLs. */
export const DEFAULT_PAGE_ORIGIN = 'https://pay.myr-gateway.test';

/** Path segment of each method's gateway page (`/bank/PAY_…`), after the `/pay/PAY_…` payment page. */
export const GATEWAY_PAGES: Record<MockPaymentRecord['payment_method'], string> = {
  QR_PAYMENT: 'qr',
  BANK_TRANSFER: 'bank',
  MOBILE_WALLET: 'wallet',
};

type Bucket = keyof MockRateLimits;

interface Route {
  endpoint: Endpoint | 'unknown';
  identifier?: string;
  /** A known path called with the wrong method. */
  wrongMethod?: boolean;
}

/** Which endpoint a method and a path relative to the base URL address. */
export function route(method: string, path: string): Route {
  const m = method.toUpperCase();
  if (path === '/auth/token') return m === 'POST' ? { endpoint: 'auth' } : { endpoint: 'unknown', wrongMethod: true };
  if (path === '/payment/request') {
    return m === 'POST' ? { endpoint: 'payment.create' } : { endpoint: 'unknown', wrongMethod: true };
  }
  if (path === '/payment/withdraw') return m === 'POST' ? { endpoint: 'withdraw' } : { endpoint: 'unknown', wrongMethod: true };
  const status = /^\/payment\/status\/([^/]+)$/.exec(path);
  if (status) {
    if (m !== 'GET') return { endpoint: 'unknown', wrongMethod: true };
    let identifier = status[1] as string;
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

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

function parseBody(text: string): unknown {
  if (text.length === 0) return undefined;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return text;
  }
}

/** The status record of a payment or withdrawal (same shape for both, A6). */
export function statusView(record: MockRecord) {
  return {
    payment_id: record.payment_id,
    reference_id: record.reference_id,
    amount: record.amount,
    currency: record.currency,
    status: record.status,
    gateway_reference: record.gateway_reference,
    created_at: record.created_at,
    completed_at: record.completed_at,
    expires_at: record.kind === 'DEPOSIT' ? record.expires_at : null,
  };
}

/** Creates the dispatcher over a context. */
export function createDispatcher(ctx: DispatchContext): (request: Request) => Promise<Response> {
  const { options, state, faults } = ctx;

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
    const context = (): AnswerContext => ({ correlationId: globalThis.crypto.randomUUID(), path: fullPath, now: options.now() });
    const limitOf = (): number | undefined => (options.rateLimits ? options.rateLimits[bucketOf(target.endpoint)] : undefined);

    let fault: TakenFault | undefined = faults.take(target.endpoint);
    while (fault && fault.when === 'before' && fault.response.type === 'delay') {
      await sleep(fault.response.ms);
      fault = faults.take(target.endpoint);
    }
    if (fault && fault.when === 'before' && fault.response.type !== 'delay') {
      return answer(faultAnswer(fault.response, context(), limitOf()));
    }

    const response = await process(target, body, request.headers.get('authorization'), context());
    if (fault && fault.when === 'after') {
      if (fault.response.type === 'delay') {
        await sleep(fault.response.ms);
        return answer(response);
      }
      return answer(faultAnswer(fault.response, context(), limitOf()));
    }
    return answer(response);
  };

  function rate(key: string, endpoint: Endpoint | 'unknown', now: number): RateDecision | undefined {
    if (!options.rateLimits) return undefined;
    const bucket = bucketOf(endpoint);
    return state.rateCheck(`${bucket}:${key}`, options.rateLimits[bucket], now, options.rateLimitWindowMs);
  }

  async function process(target: Route, body: unknown, authorization: string | null, ac: AnswerContext): Promise<Response> {
    const now = ac.now;
    if (target.endpoint === 'auth') {
      const merchantId = isRecord(body) && typeof body.merchant_id === 'string' ? body.merchant_id : undefined;
      const decision = rate(merchantId ?? 'anonymous', 'auth', now);
      const h = baseHeaders(ac, decision);
      if (decision && !decision.allowed) return tooMany(ac, h, decision);
      return authenticate(body, h);
    }

    const token = parseBearer(authorization);
    const tokenState = token === undefined ? undefined : state.tokens.get(token);
    const decision = rate(tokenState?.merchantId ?? 'anonymous', target.endpoint, now);
    const h = baseHeaders(ac, decision);
    if (decision && !decision.allowed) return tooMany(ac, h, decision);

    if (target.endpoint === 'unknown') {
      return target.wrongMethod
        ? json(405, errorBody('METHOD_NOT_ALLOWED', 'Method not allowed on this path'), h)
        : json(404, errorBody('NOT_FOUND', 'No such endpoint'), h);
    }
    if (!tokenState) return json(401, errorBody('UNAUTHORIZED', 'Missing or invalid access token'), h);
    if (tokenState.revoked || now >= tokenState.expiresAt) {
      return json(401, errorBody('TOKEN_EXPIRED', 'Access token expired'), h);
    }
    const merchant = state.merchants.get(tokenState.merchantId);
    if (!merchant) return json(401, errorBody('UNAUTHORIZED', 'Missing or invalid access token'), h);
    const blocked = merchantBlocked(merchant);
    if (blocked) return json(blocked.status, errorBody(blocked.code, blocked.message), h);

    switch (target.endpoint) {
      case 'payment.create':
        return createPayment(merchant, body, h, now);
      case 'withdraw':
        return createWithdrawal(merchant, body, h, now);
      case 'payment.status': {
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
    return json(200, { status: 'success', data: { access_token: accessToken, token_type: 'Bearer', expires_in: expiresIn } }, h);
  }

  function duplicateOrUnavailable(
    merchant: MerchantState,
    reference: string,
    channel: MockPaymentRecord['payment_method'] | 'WITHDRAWAL',
  ): Rejection | undefined {
    if (state.findByReference(merchant.merchantId, reference)) {
      return { status: 409, code: 'DUPLICATE_REFERENCE', message: `reference_id ${reference} was already used` };
    }
    if (state.unavailable.has(channel)) {
      return { status: 503, code: 'NO_GATEWAY_AVAILABLE', message: `No active gateway for ${channel}` };
    }
    return undefined;
  }

  function createPayment(merchant: MerchantState, body: unknown, h: Record<string, string>, now: number): Response {
    const checked = validateDeposit(body, options.production);
    if (!checked.ok) return json(checked.error.status, errorBody(checked.error.code, checked.error.message), h);
    const req = checked.value;
    const refused = duplicateOrUnavailable(merchant, req.reference_id, req.payment_method);
    if (refused) return json(refused.status, errorBody(refused.code, refused.message), h);

    const id = options.generateId('PAY_');
    const expiresAt = new Date(now + options.paymentTtlSeconds * 1000).toISOString();
    const record: MockPaymentRecord = {
      ...newRecord(id, merchant, req, now),
      kind: 'DEPOSIT',
      payment_method: req.payment_method,
      customer_name: req.customer_name,
      customer_phone: req.customer_phone,
      callback_url: req.callback_url,
      redirect_url: req.redirect_url,
      metadata: req.metadata,
      payment_url: `${options.pageOrigin}/pay/${encodeURIComponent(id)}`,
      gateway_redirect_url: `${options.pageOrigin}/${GATEWAY_PAGES[req.payment_method]}/${encodeURIComponent(id)}`,
      qr_data_string: null,
      expires_at: expiresAt,
    };
    if (record.payment_method === 'QR_PAYMENT') record.qr_data_string = options.qrDataString(record);
    return stored(
      record,
      {
        payment_id: id,
        payment_url: record.payment_url,
        status: record.status,
        amount: record.amount,
        currency: record.currency,
        reference_id: record.reference_id,
        expires_in: options.paymentTtlSeconds,
        expires_at: expiresAt,
        gateway: { behavior: 'REDIRECT_EXTERNAL', redirect_url: record.gateway_redirect_url, qr_data_string: record.qr_data_string },
      },
      h,
    );
  }

  /** Keeps a new payment or withdrawal and answers the success envelope around `data`. */
  function stored(record: MockRecord, data: Record<string, unknown>, h: Record<string, string>): Response {
    state.records.set(record.payment_id, record);
    return json(200, { status: 'success', data }, h);
  }

  function createWithdrawal(merchant: MerchantState, body: unknown, h: Record<string, string>, now: number): Response {
    const checked = validateWithdrawal(body);
    if (!checked.ok) return json(checked.error.status, errorBody(checked.error.code, checked.error.message), h);
    const req = checked.value;
    const refused = duplicateOrUnavailable(merchant, req.reference_id, 'WITHDRAWAL');
    if (refused) return json(refused.status, errorBody(refused.code, refused.message), h);

    const id = options.generateId('WD_');
    const record: MockWithdrawalRecord = {
      ...newRecord(id, merchant, req, now),
      kind: 'WITHDRAWAL',
      method: 'BANK',
      bank_code: req.bank_code,
      account_number: req.account_number,
      account_name: req.account_name,
    };
    return stored(
      record,
      {
        payment_id: id,
        reference_id: record.reference_id,
        amount: record.amount,
        currency: record.currency,
        status: record.status,
        method: record.method,
        bank_code: record.bank_code,
        account_number: maskAccountNumber(record.account_number),
        account_name: record.account_name,
        created_at: record.created_at,
      },
      h,
    );
  }
}

/** What every new payment or withdrawal starts with: PROCESSING, in MYR, not completed. */
function newRecord(id: string, merchant: MerchantState, req: { reference_id: string; amount: number }, now: number): MockRecordCommon {
  return {
    payment_id: id,
    merchantId: merchant.merchantId,
    reference_id: req.reference_id,
    amount: req.amount,
    currency: 'MYR',
    status: 'PROCESSING',
    gateway_reference: null,
    created_at: new Date(now).toISOString(),
    completed_at: null,
  };
}

function merchantBlocked(merchant: MerchantState): Rejection | undefined {
  if (merchant.status === 'DISABLED') return { status: 403, code: 'MERCHANT_DISABLED', message: 'Merchant account disabled' };
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

/** The default id generator: prefix and 24 random upper-case hex characters. */
export function defaultGenerateId(prefix: 'PAY_' | 'WD_'): string {
  return `${prefix}${randomHex(12)}`;
}
