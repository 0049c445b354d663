/**
 * The public interface of a running mock, {@link MockGateway}. Kept apart from
 * `mock-gateway.ts` (which binds the service to msw) so that `service.ts` can describe itself
 * in terms of it without importing the msw binding back.
 *
 * @module
 */
import type { RequestHandler } from 'msw';
import type { MockHttpServer, ServeOptions } from '../server.js';
import type { CallbackDelivery, CallbackOptions } from './callbacks.js';
import type { Fault } from './faults.js';
import type { Endpoint, GatewayChannel, MerchantStatus, MockTerminalStatus } from './options.js';
import type { MockPaymentRecord, MockWithdrawalRecord, RecordedRequest } from './records.js';

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
  readonly merchant: {
    /** The merchant id. */
    merchantId: string;
    /** The merchant's api key (a test key of the mock). */
    apiKey: string;
  };
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
   * Clears payments, withdrawals, rate windows, faults, recorded requests, availability
   * switches and merchant status changes. Keeps merchants, options and the tokens it issued
   * (expired ones stay expired), so a client created once per test file keeps its cached
   * token across tests: no 401, no extra token request.
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
  completePayment(
    idOrReference: string,
    status: MockTerminalStatus,
    options?: CallbackOptions,
  ): Promise<CallbackDelivery>;
  /**
   * Moves a withdrawal to a terminal status and delivers the signed callback (with
   * `bank_code` and the masked `account_number`) to the merchant's default callback URL.
   * @example
   * ```ts
   * await mock.completeWithdrawal('PAYOUT1', 'FAILED', { callbackUrl: 'http://127.0.0.1:4000/cb' });
   * ```
   */
  completeWithdrawal(
    idOrReference: string,
    status: MockTerminalStatus,
    options?: CallbackOptions,
  ): Promise<CallbackDelivery>;
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
