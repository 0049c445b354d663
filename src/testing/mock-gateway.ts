/**
 * `createMockGateway`: the whole service as msw handlers over in-memory state.
 *
 * @module
 */
import type { RequestHandler } from 'msw';
import { setupServer, type SetupServer } from 'msw/node';
import { defaultCallbackFetch, deliverCallback } from './callbacks.js';
import { FaultQueue } from './faults.js';
import { createDispatcher, createMswHandlers, defaultGenerateId, type ResolvedOptions } from './handlers.js';
import { serveOverHttp, type MockHttpServer, type ServeOptions } from './server.js';
import { DEFAULT_RATE_LIMITS, MockState, RATE_WINDOW_MS, randomHex, type MockRecord } from './state.js';
import type {
  CallbackDelivery,
  CallbackOptions,
  Endpoint,
  Fault,
  GatewayChannel,
  MerchantStatus,
  MockGatewayOptions,
  MockMerchant,
  MockPaymentRecord,
  MockTerminalStatus,
  MockWithdrawalRecord,
  RecordedRequest,
} from './types.js';

/** The default base URL of the mock. */
export const DEFAULT_BASE_URL = 'https://api.myr-gateway.test/api/v1';

/** The merchant the mock knows when none is configured. */
export const DEFAULT_MERCHANT: Readonly<Required<Pick<MockMerchant, 'merchantId' | 'apiKey'>>> = Object.freeze({
  merchantId: 'MERCHANT_TEST',
  apiKey: 'sk_test_mock_api_key_0001',
});

const TERMINAL: ReadonlySet<string> = new Set(['SUCCESS', 'FAILED', 'EXPIRED', 'CANCELLED', 'REFUNDED']);

/**
 * A running mock of the service. Create it with {@link createMockGateway}.
 *
 * @example
 * ```ts
 * const mock = createMockGateway();
 * beforeAll(() => mock.listen());
 * afterEach(() => mock.reset());
 * afterAll(() => mock.close());
 * ```
 */
export interface MockGateway {
  /** Base URL the handlers answer on (no trailing slash). */
  readonly baseUrl: string;
  /** Credentials of the first merchant, to configure the client with. */
  readonly merchant: { merchantId: string; apiKey: string };
  /**
   * The msw handlers, for a merchant's own `setupServer(...mock.handlers)`.
   * @example
   * ```ts
   * const server = setupServer(...mock.handlers, ...myOtherHandlers);
   * ```
   */
  readonly handlers: RequestHandler[];
  /**
   * Starts an msw server with these handlers; unmatched requests pass through untouched.
   * @example beforeAll(() => mock.listen());
   */
  listen(): void;
  /**
   * Stops the msw server started by `listen()`.
   * @example afterAll(() => mock.close());
   */
  close(): void;
  /**
   * Clears payments, withdrawals, tokens, rate windows, faults, recorded requests,
   * availability switches and merchant status changes. Keeps merchants and options.
   * @example afterEach(() => mock.reset());
   */
  reset(): void;
  /**
   * Every request received, in order.
   * @example expect(mock.requests.map((r) => r.endpoint)).toEqual(['auth', 'payment.create']);
   */
  readonly requests: ReadonlyArray<RecordedRequest>;
  /**
   * How many requests hit `endpoint` (all requests when omitted).
   * @example expect(mock.count('auth')).toBe(1);
   */
  count(endpoint?: Endpoint | 'unknown'): number;
  /**
   * Queues a fault; faults are consumed in FIFO order by matching requests.
   * @example mock.fault({ endpoint: 'payment.create', response: { type: 'status', status: 503 } });
   */
  fault(fault: Fault): void;
  /**
   * Makes every token issued so far answer 401 TOKEN_EXPIRED. Tokens issued later are fine.
   * @example mock.expireTokens();
   */
  expireTokens(): void;
  /**
   * Turns a deposit method or withdrawals off (503 NO_GATEWAY_AVAILABLE) or back on.
   * @example mock.setGatewayAvailable('BANK_TRANSFER', false);
   */
  setGatewayAvailable(method: GatewayChannel, available: boolean): void;
  /**
   * Changes a merchant's status; its existing tokens then get 403 too.
   * @example mock.setMerchantStatus(mock.merchant.merchantId, 'LOCKED');
   */
  setMerchantStatus(merchantId: string, status: MerchantStatus): void;
  /**
   * Every stored deposit, in creation order.
   * @example expect(mock.payments).toHaveLength(1);
   */
  readonly payments: ReadonlyArray<MockPaymentRecord>;
  /**
   * Every stored withdrawal, in creation order.
   * @example expect(mock.withdrawals[0]?.status).toBe('PROCESSING');
   */
  readonly withdrawals: ReadonlyArray<MockWithdrawalRecord>;
  /**
   * A stored deposit by payment_id, else by reference_id (any merchant).
   * @example expect(mock.getPayment('ORDER1')?.status).toBe('PROCESSING');
   */
  getPayment(idOrReference: string): MockPaymentRecord | undefined;
  /**
   * A stored withdrawal by id, else by reference_id (any merchant).
   * @example expect(mock.getWithdrawal('PAYOUT1')?.account_number).toBe('5140123456789');
   */
  getWithdrawal(idOrReference: string): MockWithdrawalRecord | undefined;
  /**
   * Moves a deposit to a terminal status and delivers the signed callback.
   * SUCCESS sets `completed_at`; other statuses leave it null (REFUNDED keeps an earlier one).
   * SUCCESS, FAILED and REFUNDED set `gateway_reference`. Throws when no deposit matches.
   * @example
   * ```ts
   * const delivery = await mock.completePayment(payment.payment_id, 'SUCCESS', { retryDelaysMs: [10, 20] });
   * ```
   */
  completePayment(idOrReference: string, status: MockTerminalStatus, options?: CallbackOptions): Promise<CallbackDelivery>;
  /**
   * Moves a withdrawal to a terminal status and delivers the signed callback (with
   * `bank_code` and the masked `account_number`) to the merchant's default callback URL.
   * @example
   * ```ts
   * await mock.completeWithdrawal('PAYOUT1', 'FAILED', { callbackUrl: 'http://127.0.0.1:4000/cb' });
   * ```
   */
  completeWithdrawal(idOrReference: string, status: MockTerminalStatus, options?: CallbackOptions): Promise<CallbackDelivery>;
  /**
   * Serves the same mock (same state, faults and recording) over real HTTP on 127.0.0.1,
   * for tests that need a real socket: a `networkError` fault then destroys the connection.
   * @example
   * ```ts
   * const server = await mock.serve();
   * const gateway = new MyrGateway({ baseUrl: server.baseUrl, allowInsecureLoopback: true, ...mock.merchant });
   * await server.close();
   * ```
   */
  serve(options?: ServeOptions): Promise<MockHttpServer>;
}

function resolveOptions(options: MockGatewayOptions): ResolvedOptions {
  const baseUrl = (options.baseUrl ?? DEFAULT_BASE_URL).replace(/\/+$/, '');
  const basePath = new URL(baseUrl).pathname.replace(/\/+$/, '');
  return {
    baseUrl,
    basePath,
    production: (options.environment ?? 'production') === 'production',
    tokenTtlSeconds: options.tokenTtlSeconds ?? 3600,
    paymentTtlSeconds: options.paymentTtlSeconds ?? 900,
    now: options.now ?? Date.now,
    rateLimits: options.rateLimits === false ? false : { ...DEFAULT_RATE_LIMITS, ...options.rateLimits },
    rateLimitShape: options.rateLimitShape ?? 'envelope',
    rateLimitWindowMs: windowOption(options.rateLimitWindowMs),
    generateId: options.generateId ?? defaultGenerateId,
  };
}

/**
 * Creates an in-memory mock of the whole MYR Payment Gateway Service as msw handlers:
 * the four endpoints with every rule and error code of the spec, expiring tokens, rate
 * limits, fault injection, request recording, and signed callbacks.
 *
 * @example
 * ```ts
 * import { createMockGateway } from 'myr-gateway/testing';
 * import { MyrGateway } from 'myr-gateway';
 *
 * const mock = createMockGateway();
 * beforeAll(() => mock.listen());
 * afterEach(() => mock.reset());
 * afterAll(() => mock.close());
 *
 * it('creates a payment', async () => {
 *   const gateway = new MyrGateway({ baseUrl: mock.baseUrl, ...mock.merchant });
 *   const payment = await gateway.payments.create({
 *     amount: 120.5, reference_id: 'ORDER1001', customer_name: 'Aisyah', customer_phone: '60123456789',
 *     payment_method: 'MOBILE_WALLET',
 *   });
 *   expect(mock.getPayment(payment.payment_id)?.status).toBe('PROCESSING');
 * });
 * ```
 */
export function createMockGateway(options: MockGatewayOptions = {}): MockGateway {
  const resolved = resolveOptions(options);
  const merchants = options.merchants && options.merchants.length > 0 ? options.merchants : [DEFAULT_MERCHANT];
  const first = merchants[0] as MockMerchant;
  const state = new MockState(merchants);
  const faults = new FaultQueue();
  const requests: RecordedRequest[] = [];
  const dispatch = createDispatcher({ options: resolved, state, faults, requests });
  const handlers = createMswHandlers(resolved.baseUrl, dispatch);
  const callbackFetch = options.callbackFetch ?? defaultCallbackFetch();
  let server: SetupServer | undefined;

  function complete(
    kind: MockRecord['kind'],
    idOrReference: string,
    status: MockTerminalStatus,
    callbackOptions: CallbackOptions = {},
  ): Promise<CallbackDelivery> {
    if (!TERMINAL.has(status)) {
      return Promise.reject(new RangeError(`status must be one of ${[...TERMINAL].join(', ')}, got ${String(status)}`));
    }
    const record = state.find(idOrReference);
    if (!record || record.kind !== kind) {
      const noun = kind === 'DEPOSIT' ? 'payment' : 'withdrawal';
      return Promise.reject(new Error(`mock gateway: no ${noun} with id or reference_id ${idOrReference}`));
    }
    const merchant = state.merchants.get(record.merchantId);
    const now = resolved.now();
    const previous = record.completed_at;
    record.status = status;
    record.completed_at = status === 'SUCCESS' ? new Date(now).toISOString() : status === 'REFUNDED' ? previous : null;
    if ((status === 'SUCCESS' || status === 'FAILED' || status === 'REFUNDED') && record.gateway_reference === null) {
      record.gateway_reference = `GW${randomHex(8)}`;
    }
    const url =
      callbackOptions.callbackUrl ??
      (record.kind === 'DEPOSIT' ? record.callback_url : null) ??
      merchant?.defaultCallbackUrl ??
      null;
    return deliverCallback({
      record,
      apiKey: merchant?.apiKey ?? '',
      url,
      now: resolved.now,
      fetch: callbackFetch,
      options: callbackOptions,
    });
  }

  const mock: MockGateway = {
    baseUrl: resolved.baseUrl,
    merchant: { merchantId: first.merchantId, apiKey: first.apiKey },
    handlers,
    listen() {
      if (server) return;
      server = setupServer(...handlers);
      server.listen({ onUnhandledFrame: 'bypass' });
    },
    close() {
      server?.close();
      server = undefined;
    },
    reset() {
      state.clear();
      faults.clear();
      requests.length = 0;
    },
    requests,
    count(endpoint) {
      return endpoint === undefined ? requests.length : requests.filter((r) => r.endpoint === endpoint).length;
    },
    fault(fault) {
      faults.add(fault);
    },
    expireTokens() {
      state.expireAllTokens();
    },
    setGatewayAvailable(method, available) {
      if (available) state.unavailable.delete(method);
      else state.unavailable.add(method);
    },
    setMerchantStatus(merchantId, status) {
      const merchant = state.merchants.get(merchantId);
      if (!merchant) throw new Error(`mock gateway: unknown merchant ${merchantId}`);
      merchant.status = status;
    },
    get payments() {
      const now = resolved.now();
      return [...state.records.values()].filter(
        (r): r is MockPaymentRecord => r.kind === 'DEPOSIT' && state.applyExpiry(r, now) === r,
      );
    },
    get withdrawals() {
      return [...state.records.values()].filter((r): r is MockWithdrawalRecord => r.kind === 'WITHDRAWAL');
    },
    getPayment(idOrReference) {
      const record = state.applyExpiry(state.find(idOrReference), resolved.now());
      return record?.kind === 'DEPOSIT' ? record : undefined;
    },
    getWithdrawal(idOrReference) {
      const record = state.find(idOrReference);
      return record?.kind === 'WITHDRAWAL' ? record : undefined;
    },
    completePayment(idOrReference, status, callbackOptions) {
      return complete('DEPOSIT', idOrReference, status, callbackOptions);
    },
    completeWithdrawal(idOrReference, status, callbackOptions) {
      return complete('WITHDRAWAL', idOrReference, status, callbackOptions);
    },
    serve(serveOptions) {
      return serveOverHttp(dispatch, resolved.basePath, serveOptions);
    },
  };
  return mock;
}

function windowOption(value: number | undefined): number {
  if (value === undefined) return RATE_WINDOW_MS;
  if (!Number.isInteger(value) || value < 100 || value > 3_600_000) {
    throw new TypeError('rateLimitWindowMs must be a whole number of milliseconds from 100 to 3600000');
  }
  return value;
}
