/**
 * `myr-gateway/testing`: an msw mock of the whole MYR Payment Gateway Service, for the
 * SDK's own tests and for merchants' tests. Requires `msw` (a peer of this subpath).
 *
 * @example
 * ```ts
 * import { createMockGateway, signCallback } from 'myr-gateway/testing';
 * ```
 *
 * @module
 */
export { createMockGateway, DEFAULT_BASE_URL, DEFAULT_MERCHANT, type MockGateway } from './mock-gateway.js';
export { signCallback, callbackHeaders, type SignCallbackInput, type SignedCallback } from '../webhooks/sign.js';
export { WITHDRAWAL_EWALLET_CODES, maskAccountNumber } from './validation.js';
export type { MockHttpServer, ServeOptions } from './server.js';
export type {
  CallbackAttempt,
  CallbackDelivery,
  CallbackOptions,
  Endpoint,
  Fault,
  FaultResponse,
  GatewayChannel,
  MerchantStatus,
  MockCallbackBody,
  MockGatewayOptions,
  MockMerchant,
  MockPaymentRecord,
  MockRateLimits,
  MockRecordCommon,
  MockTerminalStatus,
  MockWithdrawalRecord,
  RecordedRequest,
} from './types.js';
