/**
 * `myr-gateway/webhooks`: verify the service's callbacks and handle each exactly once,
 * with thin adapters for Express, Fastify, Hono, Koa and Web-standard runtimes.
 *
 * @module
 */
export { SignedStringError, type SignedStringProblem } from './signing-scheme.js';
export type { SpanAttributes, SpanAttributeValue, SpanLike, TracerLike } from '../core/observe/trace.js';
export {
  ClaimLostError,
  WebhookHandlerError,
  WebhookVerificationError,
  type ClaimLostOperation,
  type WebhookVerificationReason,
} from './errors.js';
export {
  callbackHeaders,
  signCallback,
  type CallbackBody,
  type SignCallbackInput,
  type SignedCallback,
} from './sign.js';
export {
  TERMINAL_STATUSES,
  type DepositEvent,
  type DepositUnsignedFields,
  type SignedEventFields,
  type TerminalStatus,
  type TransactionType,
  type WebhookEvent,
  type WithdrawalEvent,
  type WithdrawalUnsignedFields,
} from './events.js';
export type { WebhookBody, WebhookHeaders, WebhookHeaderValue, WebhookRequest } from './request-parts.js';
export { WebhookVerifier, type WebhookVerifierOptions } from './verifier.js';
export {
  confirmDeposit,
  type DepositConfirmation,
  type DepositMismatch,
  type ExpectedDeposit,
  type PaymentStatusSource,
} from './confirm.js';
export type { PaymentStatus } from '../schemas/statuses.js';
export { createWebhookHandler } from './handler.js';
export type {
  WebhookEventContext,
  WebhookHandler,
  WebhookHandlerOptions,
  WebhookIdempotency,
  WebhookOutcome,
  WebhookResponse,
  WebhookResponseBody,
} from './handler-options.js';
export type {
  LedgerRun,
  LedgerWarning,
  PaymentOrder,
  TransactionalWebhookStore,
  WebhookClaim,
  WebhookStore,
} from './stores/types.js';
export { MemoryWebhookStore, type MemoryWebhookStoreOptions } from './stores/memory.js';
export {
  createExpressMiddleware,
  createFastifyHandler,
  createHonoHandler,
  createKoaMiddleware,
  createNodeHandler,
  createWebHandler,
  fastifyWebhookPlugin,
  type FastifyInstanceLike,
  type FastifyReplyLike,
  type FastifyRequestLike,
  type FastifyWebhookPluginOptions,
  type HonoContextLike,
  type KoaContextLike,
  type KoaWebhookOptions,
  type NodeRequestLike,
  type WebhookAdapterInput,
  type WebhookAdapterOptions,
} from './adapters/index.js';
export { paymentKey } from './payment-key.js';
export { runOnce, type RunOnceOptions, type RunOnceResult } from './run-once.js';
export { DEFAULT_IN_FLIGHT_TTL_MS, GATEWAY_RETRY_DELAYS_MS, deliveryAfterCrash } from './delivery-policy.js';
export { isSuperseded, lifecycleRank } from './lifecycle.js';
