/**
 * `myr-gateway/webhooks`: verify the service's callbacks and handle each exactly once,
 * with thin adapters for Express, Fastify, Hono, Koa and Web-standard runtimes.
 *
 * @module
 */
export {
  SIGNED_FIELDS,
  SIGNING_KEY_INFO,
  SignedStringError,
  buildSignedString,
  deriveSigningKey,
  signCallbackFields,
  type SignedCallbackFields,
  type SigningKey,
} from './signature.js';
export * from './errors.js';
export * from './events.js';
export * from './verifier.js';
export * from './confirm.js';
export * from './handler.js';
export { paymentKey, runOnce, type RunOnceOptions, type RunOnceResult } from './run-once.js';
export * from './stores/index.js';
export * from '../adapters/index.js';
