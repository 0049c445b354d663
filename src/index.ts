/**
 * The typed client of the MYR Payment Gateway Service.
 *
 * @example
 * ```ts
 * import { MyrGateway, MyrGatewayError } from 'myr-gateway';
 * ```
 * @module
 */
export { MyrGateway } from './client.js';
export type { MyrGatewayOptions } from './client-options.js';
export {
  AbortError,
  ApiError,
  AuthenticationError,
  ConnectionError,
  DuplicateReferenceError,
  InvalidResponseError,
  NotFoundError,
  PermissionDeniedError,
  RateLimitError,
  ServiceUnavailableError,
  TimeoutError,
} from './core/errors/service.js';
export {
  ConfigurationError,
  InvalidRequestError,
  MyrGatewayError,
  type ApiErrorCode,
  type ClientErrorCode,
  type ErrorCode,
  type MyrGatewayErrorInit,
} from './core/errors/base.js';
export { OutcomeUnknownError, PaymentPendingError, PaymentUrlUnavailableError } from './core/errors/outcome.js';
export { MemoryTokenStore } from './core/tokens/manager.js';
export type { StoredToken, TokenRefreshOptions, TokenStore } from './core/tokens/store.js';
export type { Logger, LogLevel } from './core/observe/log.js';
export type { RequestEvent, ResponseEvent, ResponseInfo, RetryEvent, WithResponse } from './core/observe/events.js';
export type { SpanAttributes, SpanAttributeValue, SpanLike, TracerLike } from './core/observe/trace.js';
export type { RateLimitInfo } from './core/pacing/rate-limit-headers.js';
export {
  PUBLISHED_LIMITS,
  type AcquireOptions,
  type RateBucket,
  type RateLimiter,
  type RateLimitObservation,
} from './core/pacing/limiter-contract.js';
export { MemoryRateLimiter } from './core/pacing/memory-limiter.js';
export type { RetryOptions } from './core/call/retry-options.js';
export type { RequestOptions } from './core/call/call-spec.js';
export type { Payments } from './resources/payments.js';
export type { WaitForCompletionOptions } from './resources/wait.js';
export type { WithdrawalRecovery, Withdrawals } from './resources/withdrawals.js';
export {
  PROVIDER_CHANNELS_GROUP_A,
  PROVIDER_CHANNELS_GROUP_B,
  WITHDRAWAL_EWALLET_CODES,
  isProviderChannelId,
  type ProviderChannelId,
} from './schemas/bank-codes.js';
export { CURRENCY, DEPOSIT_AMOUNT, WITHDRAWAL_AMOUNT, hasAtMostTwoDecimals } from './schemas/common.js';
export {
  PAYMENT_METHODS,
  PAYMENT_STATUSES,
  TERMINAL_STATUSES,
  customerRedirectUrl,
  type PaymentCreated,
  type PaymentCreateParams,
  type PaymentGateway,
  type PaymentMethod,
  type PaymentStatus,
  type PaymentStatusValue,
  type TerminalStatus,
} from './schemas/payments.js';
export { maskAccountNumber, type Withdrawal, type WithdrawalCreateParams } from './schemas/withdrawals.js';
export { VERSION } from './version.js';
