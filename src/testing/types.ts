/**
 * Public types of the `myr-gateway/testing` mock.
 *
 * @module
 */
import type { TerminalStatus } from '../schemas/statuses.js';
import type { CallbackBody } from '../webhooks/sign.js';

/** The four endpoints of the service, as the mock names them in recordings and faults. */
export type Endpoint = 'auth' | 'payment.create' | 'payment.status' | 'withdraw';

/** Status of a merchant account. DISABLED and LOCKED merchants get 403 on every call. */
export type MerchantStatus = 'ACTIVE' | 'DISABLED' | 'LOCKED';

/** Something that can be made unavailable with `setGatewayAvailable`: a deposit method or withdrawals. */
export type GatewayChannel = 'QR_PAYMENT' | 'BANK_TRANSFER' | 'MOBILE_WALLET' | 'WITHDRAWAL';

/** A terminal status, the only kind a payment or withdrawal can be completed with. */
export type MockTerminalStatus = TerminalStatus;

/**
 * A merchant account known to the mock.
 *
 * @example
 * ```ts
 * createMockGateway({
 *   merchants: [
 *     { merchantId: 'SHOP1', apiKey: 'sk_test_shop1', defaultCallbackUrl: 'https://shop1.test/cb' },
 *     { merchantId: 'SHOP2', apiKey: 'sk_test_shop2', status: 'LOCKED' },
 *   ],
 * });
 * ```
 */
export interface MockMerchant {
  /** The merchant's id, sent as `merchant_id` to `POST /auth/token`. */
  merchantId: string;
  /** The merchant's secret key; also the root of its callback signing key. */
  apiKey: string;
  /**
   * Account status. `DISABLED` answers 403 MERCHANT_DISABLED, `LOCKED` 403 MERCHANT_LOCKED.
   * @default 'ACTIVE'
   */
  status?: MerchantStatus;
  /** Where callbacks go when a payment has no `callback_url` (and for every withdrawal). */
  defaultCallbackUrl?: string;
}

/** Per-minute limits of the sliding 60 s windows, per merchant. */
export interface MockRateLimits {
  /** `POST /auth/token`, keyed by the `merchant_id` in the body. @default 5 */
  auth: number;
  /** `POST /payment/request`. @default 100 */
  paymentRequest: number;
  /** `POST /payment/withdraw`. @default 50 */
  withdraw: number;
  /** Every other request (status lookups, unknown paths). @default 100 */
  other: number;
}

/**
 * Options of {@link createMockGateway}. Every option is optional.
 *
 * @example
 * ```ts
 * let clock = Date.parse('2026-01-01T00:00:00Z');
 * const mock = createMockGateway({
 *   environment: 'test',
 *   now: () => clock,
 *   rateLimits: { auth: 2 },
 * });
 * ```
 */
export interface MockGatewayOptions {
  /**
   * Address the handlers answer on, including the `/api/v1` prefix. A trailing `/` is ignored.
   * @default 'https://api.myr-gateway.test/api/v1'
   * @example createMockGateway({ baseUrl: 'https://sandbox.example.test/api/v1' })
   */
  baseUrl?: string;
  /**
   * Merchant accounts. The first one is exposed as `mock.merchant`.
   * @default [{ merchantId: 'MERCHANT_TEST', apiKey: 'sk_test_mock_api_key_0001' }]
   * @example createMockGateway({ merchants: [{ merchantId: 'M1', apiKey: 'k1', defaultCallbackUrl: 'https://m1.test/cb' }] })
   */
  merchants?: MockMerchant[];
  /**
   * `'production'` rejects `http://` callback and redirect URLs with 422 VALIDATION_ERROR;
   * `'test'` accepts them (so callbacks can reach a local http server).
   * @default 'production'
   * @example createMockGateway({ environment: 'test' })
   */
  environment?: 'production' | 'test';
  /**
   * Lifetime of issued access tokens, in seconds.
   * @default 3600
   * @example createMockGateway({ tokenTtlSeconds: 60 })
   */
  tokenTtlSeconds?: number;
  /**
   * Seconds from creation until a deposit expires (`expires_in`).
   * @default 900
   * @example createMockGateway({ paymentTtlSeconds: 30 })
   */
  paymentTtlSeconds?: number;
  /**
   * The mock's clock in milliseconds. Drives token expiry, `expires_at`, payment expiry,
   * rate windows and every timestamp. Delay faults and callback retries use real timers.
   * @default Date.now
   * @example
   * ```ts
   * let t = Date.now();
   * const mock = createMockGateway({ now: () => t });
   * t += 3_600_000; // every token issued before is now expired
   * ```
   */
  now?: () => number;
  /**
   * Limits per sliding 60 s window; a partial object overrides some of the defaults.
   * `false` turns rate limiting off and also drops the `X-RateLimit-*` headers.
   * @default { auth: 5, paymentRequest: 100, withdraw: 50, other: 100 }
   * @example createMockGateway({ rateLimits: { auth: 1 } })
   */
  rateLimits?: false | Partial<MockRateLimits>;
  /**
   * Body of the mock's own 429 answers: the error envelope, or the spec's second shape
   * `{ statusCode, message, error, timestamp, path, correlationId }`.
   * @default 'envelope'
   * @example createMockGateway({ rateLimitShape: 'nest' })
   */
  rateLimitShape?: 'envelope' | 'nest';
  /**
   * Length of the sliding rate window, in ms. The `X-RateLimit-Reset` header follows it, so a
   * client can learn a shortened window (tests of pacing that should not take minutes).
   * @default 60000
   * @example createMockGateway({ rateLimits: { paymentRequest: 100 }, rateLimitWindowMs: 2000 })
   */
  rateLimitWindowMs?: number;
  /**
   * Makes the ids of new payments (`'PAY_'`) and withdrawals (`'WD_'`) deterministic.
   * @default prefix + 24 random upper-case hex characters
   * @example
   * ```ts
   * let n = 0;
   * createMockGateway({ generateId: (prefix) => `${prefix}${++n}` }); // PAY_1, WD_2, …
   * ```
   */
  generateId?: (prefix: 'PAY_' | 'WD_') => string;
  /**
   * The fetch used to deliver callbacks. By default the global `fetch` as it is when
   * `createMockGateway()` runs (before `mock.listen()` patches it), so callbacks reach real
   * servers even while msw intercepts. Pass one if another msw server already intercepts
   * and errors on unhandled requests.
   * @default globalThis.fetch (as it is when the mock is created)
   * @example createMockGateway({ callbackFetch: (url, init) => myFetch(url, init) })
   */
  callbackFetch?: typeof fetch;
}

/**
 * One request the mock received, in arrival order.
 *
 * @example
 * ```ts
 * const [first] = mock.requests;
 * expect(first?.endpoint).toBe('auth');
 * expect(first?.headers['content-type']).toContain('application/json');
 * ```
 */
export interface RecordedRequest {
  /** Which endpoint it hit; `'unknown'` for any other path or method under the base URL. */
  endpoint: Endpoint | 'unknown';
  /** HTTP method, upper case. */
  method: string;
  /** Path relative to the base URL, with the query string, e.g. `/payment/status/PAY_1`. */
  path: string;
  /** Request headers, names in lower case. */
  headers: Record<string, string>;
  /** Parsed JSON body; the raw text when it is not JSON; `undefined` when empty. */
  body: unknown;
  /** HTTP status of the answer; `0` for a network error (and while still being answered). */
  status: number;
  /** Arrival time on the mock's clock (ms). */
  at: number;
}

/**
 * The answer a {@link Fault} gives.
 *
 * - `status`: a JSON error envelope `{ status: 'error', error: code, message }`. `code`
 *   defaults from the status (400 VALIDATION_ERROR, 401 UNAUTHORIZED, 403 MERCHANT_DISABLED,
 *   404 NOT_FOUND, 409 DUPLICATE_REFERENCE, 429 RATE_LIMITED, 502 GATEWAY_ERROR,
 *   503 NO_GATEWAY_AVAILABLE, 504 GATEWAY_TIMEOUT, anything else INTERNAL_ERROR).
 * - `rateLimit`: 429; `Retry-After` only when `retryAfter` is given (a number is seconds,
 *   a string is sent verbatim, e.g. an HTTP date); `shape` picks the body (default envelope).
 * - `html`: a `text/html` error page, as a proxy would send.
 * - `networkError`: the connection fails (msw's `HttpResponse.error()`).
 * - `delay`: wait `ms` real milliseconds, then go on normally (or with the next matching fault).
 * - `tokenExpired`: 401 TOKEN_EXPIRED (the token itself stays valid).
 * - `body`: any JSON body (default status 200), e.g. a malformed success; a string body is sent verbatim.
 */
export type FaultResponse =
  | {
      /** A JSON error envelope. */
      type: 'status';
      /** HTTP status of the answer. */
      status: number;
      /** The envelope's `error` code; defaults from the status (see above). */
      code?: string;
      /** The envelope's `message`. */
      message?: string;
      /** Extra response headers. */
      headers?: Record<string, string>;
    }
  | {
      /** A 429 from the rate limiter. */
      type: 'rateLimit';
      /** `Retry-After`: seconds, or a string sent verbatim (an HTTP date). Absent: no header. */
      retryAfter?: number | string;
      /** Body shape: the error envelope (default) or the spec's second 429 body (`'nest'`). */
      shape?: 'envelope' | 'nest';
    }
  | {
      /** A `text/html` error page, as a proxy sends. */
      type: 'html';
      /** HTTP status of the page. */
      status: number;
    }
  | {
      /** The connection fails (fetch rejects; `mock.serve()` destroys the socket). */
      type: 'networkError';
    }
  | {
      /** Wait, then answer normally (or with the next matching fault). */
      type: 'delay';
      /** Real milliseconds to wait. */
      ms: number;
    }
  | {
      /** 401 TOKEN_EXPIRED once; the token itself stays valid. */
      type: 'tokenExpired';
    }
  | {
      /** Any body, e.g. a malformed success. */
      type: 'body';
      /** HTTP status. @default 200 */
      status?: number;
      /** A JSON value, or a string sent verbatim. */
      body: unknown;
      /** Extra response headers. */
      headers?: Record<string, string>;
    };

/**
 * A scripted misbehaviour. Faults wait in a FIFO queue; each matching request takes the
 * first one that matches its endpoint.
 *
 * @example
 * ```ts
 * // 502 twice on payment creation, then normal answers
 * mock.fault({ endpoint: 'payment.create', times: 2, response: { type: 'status', status: 502 } });
 * // the withdrawal is stored, but the answer is lost
 * mock.fault({ endpoint: 'withdraw', when: 'after', response: { type: 'networkError' } });
 * ```
 */
export interface Fault {
  /**
   * Which endpoint it applies to; `'*'` matches every request under the base URL.
   * @default '*'
   * @example { endpoint: 'withdraw', response: { type: 'networkError' } }
   */
  endpoint?: Endpoint | '*';
  /**
   * How many matching requests it answers before it is used up. `Infinity` never runs out.
   * @default 1
   * @example { times: 3, response: { type: 'status', status: 503 } }
   */
  times?: number;
  /**
   * `'before'`: answer the fault instead of processing the request. `'after'`: process the
   * request normally (state changes, rate window counted), then answer the fault instead
   * of the real answer: "the server did it but the answer was lost".
   * @default 'before'
   * @example { when: 'after', response: { type: 'status', status: 504 } }
   */
  when?: 'before' | 'after';
  /**
   * What to answer.
   * @example { response: { type: 'rateLimit', retryAfter: 2 } }
   */
  response: FaultResponse;
}

/** Fields every stored payment or withdrawal has. */
export interface MockRecordCommon {
  /** The service's id (`PAY_…` for deposits, `WD_…` for withdrawals). */
  payment_id: string;
  /** The merchant that created it. */
  merchantId: string;
  /** The merchant's reference, unique per merchant across deposits and withdrawals. */
  reference_id: string;
  /** Amount in MYR. */
  amount: number;
  /** Always `MYR`. */
  currency: 'MYR';
  /** Current status (`PROCESSING` until completed or expired). */
  status: string;
  /** The gateway's transaction reference; set on SUCCESS, FAILED and REFUNDED (not signed in callbacks). */
  gateway_reference: string | null;
  /** ISO 8601 creation time. */
  created_at: string;
  /** ISO 8601 time of a SUCCESS, else null. */
  completed_at: string | null;
}

/**
 * A stored deposit, as the mock holds it.
 *
 * @example
 * ```ts
 * const payment = mock.getPayment('ORDER1001');
 * expect(payment?.metadata).toEqual({ provider_channel_id: 'MB2U0227' });
 * ```
 */
export interface MockPaymentRecord extends MockRecordCommon {
  /** Discriminant: a deposit. */
  kind: 'DEPOSIT';
  /** The deposit method. */
  payment_method: 'QR_PAYMENT' | 'BANK_TRANSFER' | 'MOBILE_WALLET';
  /** As sent. */
  customer_name: string;
  /** As sent. */
  customer_phone: string;
  /** The payment's own `callback_url`, when one was sent. */
  callback_url: string | null;
  /** Where the customer returns afterwards, when one was sent. */
  redirect_url: string | null;
  /** Stored exactly as sent; never put in callbacks. */
  metadata: Record<string, unknown> | null;
  /** The gateway's payment page (QR_PAYMENT customers go here). */
  payment_url: string;
  /** The bank or wallet page (`gateway.redirect_url`). */
  gateway_redirect_url: string;
  /** `gateway.qr_data_string` as answered: null from the test mock, a QR payload in the sandbox. */
  qr_data_string: string | null;
  /** ISO 8601; unpaid after this, the payment reads as EXPIRED. */
  expires_at: string;
}

/**
 * A stored withdrawal, as the mock holds it. `account_number` is the full number as sent;
 * answers and callbacks carry it masked.
 *
 * @example
 * ```ts
 * expect(mock.getWithdrawal('PAYOUT1')?.status).toBe('PROCESSING');
 * ```
 */
export interface MockWithdrawalRecord extends MockRecordCommon {
  /** Discriminant: a withdrawal. */
  kind: 'WITHDRAWAL';
  /** Always `BANK`. */
  method: 'BANK';
  /** Beneficiary bank or e-wallet code. */
  bank_code: string;
  /** The full account number as sent (answers and callbacks mask it). */
  account_number: string;
  /** Beneficiary name. */
  account_name: string;
}

/**
 * Options of `completePayment` / `completeWithdrawal`.
 *
 * @example
 * ```ts
 * await mock.completePayment(id, 'SUCCESS', { retryDelaysMs: [10, 20], duplicate: true });
 * await mock.completePayment(id, 'SUCCESS', { tamper: (body) => ({ ...body, amount: 1 }) });
 * await mock.completePayment(id, 'SUCCESS', { timestampOffsetMs: -10 * 60_000 }); // stale
 * ```
 */
export interface CallbackOptions {
  /**
   * Waits before attempts 2, 3, …: the spec's "about 1 s, about 5 s". Use small values in tests.
   * @default [1000, 5000]
   * @example { retryDelaysMs: [10, 20] }
   */
  retryDelaysMs?: number[];
  /**
   * After a successful delivery, deliver the same callback (same webhook_id and body) once more.
   * @default false
   * @example { duplicate: true }
   */
  duplicate?: boolean;
  /**
   * Change the body after it was signed, e.g. to test that a verifier rejects it.
   * Headers are built from the signed body, before tampering.
   * @example { tamper: (body) => ({ ...body, amount: 999999 }) }
   */
  tamper?: (body: MockCallbackBody) => Record<string, unknown>;
  /**
   * Change the callback headers before sending.
   * @example { tamperHeaders: (h) => ({ ...h, 'X-Webhook-Signature': '0'.repeat(64) }) }
   */
  tamperHeaders?: (headers: Record<string, string>) => Record<string, string>;
  /**
   * Added to the mock's clock for the body's `timestamp`, e.g. `-10 * 60_000` for a stale callback.
   * @default 0
   * @example { timestampOffsetMs: -10 * 60_000 }
   */
  timestampOffsetMs?: number;
  /**
   * Where to send the callback instead of the payment's `callback_url` / the merchant's default.
   * @example { callbackUrl: `http://127.0.0.1:${port}/webhooks/myr` }
   */
  callbackUrl?: string;
  /**
   * `false` changes the status without sending anything.
   * @default true
   * @example { deliver: false }
   */
  deliver?: boolean;
  /**
   * Time limit of one delivery attempt; a slower answer counts as a failed attempt.
   * @default 10000
   * @example { attemptTimeoutMs: 500 }
   */
  attemptTimeoutMs?: number;
}

/** Body of a callback, as the spec lists it (the webhooks side's {@link CallbackBody}). */
export type MockCallbackBody = CallbackBody;

/** One delivery attempt of a callback. */
export interface CallbackAttempt {
  /** HTTP status of the merchant's answer, when there was one. */
  status?: number;
  /** Why the attempt failed without an answer (network error, timeout). */
  error?: string;
  /** When the attempt started, on the mock's clock (ms). */
  at: number;
  /** True for the extra delivery made by `duplicate: true`. */
  duplicate?: boolean;
  /** How long the merchant took to answer (or to fail), in real milliseconds. */
  durationMs?: number;
  /** The start of the merchant's answer body (at most 500 characters), for debugging a refusal. */
  responseBody?: string;
}

/**
 * What happened to a callback.
 *
 * @example
 * ```ts
 * const delivery = await mock.completePayment(id, 'SUCCESS', { retryDelaysMs: [10, 20] });
 * expect(delivery.delivered).toBe(true);
 * expect(delivery.attempts.map((a) => a.status)).toEqual([500, 200]);
 * ```
 */
export interface CallbackDelivery {
  /** The body's `webhook_id`, the same on every attempt. */
  webhookId: string;
  /** The body as sent (after `tamper`). */
  body: Record<string, unknown>;
  /** The headers as sent. */
  headers: Record<string, string>;
  /** Where it was sent; null when there was no callback URL. */
  url: string | null;
  /** Every attempt, in order. Empty when nothing was sent. */
  attempts: CallbackAttempt[];
  /** Whether some attempt got a 2xx answer. */
  delivered: boolean;
}
