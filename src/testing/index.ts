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
export { createMockGateway, DEFAULT_BASE_URL, DEFAULT_MERCHANT } from './mock-gateway.js';
export type { MockGateway } from './types/gateway.js';
export { signCallback, callbackHeaders, type SignCallbackInput, type SignedCallback } from '../webhooks/sign.js';
export type { MockHttpServer, ServeOptions } from './server.js';
export type { CallbackAttempt, CallbackDelivery, CallbackOptions, MockCallbackBody } from './types/callbacks.js';
export type {
  Endpoint,
  GatewayChannel,
  MerchantStatus,
  MockGatewayOptions,
  MockMerchant,
  MockRateLimits,
  MockTerminalStatus,
} from './types/options.js';
export type { Fault, FaultResponse } from './types/faults.js';
export type { MockPaymentRecord, MockRecordCommon, MockWithdrawalRecord, RecordedRequest } from './types/records.js';
