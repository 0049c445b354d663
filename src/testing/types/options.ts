/**
 * Public types of the `myr-gateway/testing` mock: the options of `createMockGateway` and the
 * small names they use (endpoints, merchant statuses, channels). Faults, stored records and
 * callbacks have their own modules beside this one.
 *
 * @module
 */
import type { TerminalStatus } from '../../schemas/statuses.js';

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
   * Counts each request against the rate limit only after a delay, as a service does whose
   * counter sits behind a queue (a load balancer, a busy upstream): `latencyMs` plus a share of
   * `jitterMs` drawn per request (`random`, 0..1, `Math.random` by default), then the rate check,
   * then the answer. The window, `X-RateLimit-*` and 429s follow the moment of counting, not the
   * arrival; a client that paces on when it sent (or on the oldest request's reset) meets 429s
   * here that it never meets against an instant counter. Whole milliseconds, each 0 to 60000.
   * @default counted on arrival
   * @example createMockGateway({ rateLimits: { paymentRequest: 30 }, rateLimitWindowMs: 6000, rateLimitCountDelay: { latencyMs: 200, jitterMs: 800 } })
   */
  rateLimitCountDelay?: {
    /** Every request is counted this many ms after it arrived. */
    latencyMs: number;
    /** Up to this many ms more, a share drawn per request. @default 0 */
    jitterMs?: number;
    /** The draw, from 0 to 1. @default Math.random */
    random?: () => number;
  };
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
