/**
 * Errors of the webhook side. Both extend {@link MyrGatewayError}, so one
 * `instanceof MyrGatewayError` check still catches everything the SDK throws.
 *
 * Messages are fixed texts: they never quote a header or body value (no attacker text
 * in logs), never the api key, the signing key or the expected signature.
 *
 * @module
 */
import { MyrGatewayError } from '../core/errors/base.js';

/**
 * Why a callback was refused.
 *
 * | reason | meaning | HTTP answer of the handler |
 * |---|---|---|
 * | `missing_signature` | neither the body's `signature` nor `X-Webhook-Signature` is present | 401 |
 * | `invalid_signature` | the signature is not 64 lowercase hex, or no configured api key produced it | 401 |
 * | `malformed` | the body is not a JSON object, a signed field has the wrong type or contains `\|`, or (after the signature matched) a field has a value the spec does not allow or `transaction_type` contradicts the signed `payment_id` | 400 |
 * | `header_mismatch` | an `X-Webhook-*` / `X-Payment-ID` header differs from the body, or is repeated with different values | 400 |
 * | `invalid_timestamp` | `timestamp` is not an ISO 8601 date-time (one without a zone is read as UTC) | 400 |
 * | `stale` | `timestamp` is older than the tolerance | 400 |
 * | `future` | `timestamp` is further ahead than the tolerance | 400 |
 * | `internal` | the runtime could not compute the HMAC (no usable crypto); not the sender's fault | 500 |
 */
export type WebhookVerificationReason =
  | 'missing_signature'
  | 'invalid_signature'
  | 'malformed'
  | 'header_mismatch'
  | 'invalid_timestamp'
  | 'stale'
  | 'future'
  | 'internal';

/**
 * A callback failed verification. `verify()` throws this and nothing else, whatever
 * the input. `reason` tells the cases apart.
 *
 * @example
 * ```ts
 * try {
 *   event = await verifier.verify({ body, headers });
 * } catch (error) {
 *   if (error instanceof WebhookVerificationError) return res.status(error.reason === 'invalid_signature' ? 401 : 400).end();
 *   throw error;
 * }
 * ```
 */
export class WebhookVerificationError extends MyrGatewayError {
  /** `'WebhookVerificationError'`, so logs show which error it is. */
  override name = 'WebhookVerificationError';
  /** Which rule the callback broke. */
  readonly reason: WebhookVerificationReason;

  constructor(reason: WebhookVerificationReason, message: string) {
    super(message, { code: 'WEBHOOK_VERIFICATION_FAILED', retryable: reason === 'internal' });
    this.reason = reason;
  }

  override toJSON(): Record<string, unknown> {
    return { ...super.toJSON(), reason: this.reason };
  }
}

/**
 * The merchant's event handler threw (or the idempotency store failed). Passed to the
 * handler's `onError` hook; the gateway was answered with a 5xx so it retries. `cause`
 * is the original error, exactly as the merchant's code threw it.
 */
export class WebhookHandlerError extends MyrGatewayError {
  /** `'WebhookHandlerError'`, so logs show which error it is. */
  override name = 'WebhookHandlerError';
  /** Which stage failed: the merchant's handler, or the idempotency store. */
  readonly stage: 'handler' | 'store';

  constructor(
    stage: 'handler' | 'store',
    message: string,
    cause?: unknown,
    code: 'WEBHOOK_HANDLER_FAILED' | 'CLAIM_LOST' = 'WEBHOOK_HANDLER_FAILED',
  ) {
    super(message, { code, retryable: code !== 'CLAIM_LOST', cause });
    this.stage = stage;
  }

  override toJSON(): Record<string, unknown> {
    return { ...super.toJSON(), stage: this.stage };
  }
}

/** Which store operation found that the claim was no longer the caller's. */
export type ClaimLostOperation = 'complete' | 'release' | 'renew';

/**
 * The claim of a running handler (or `runOnce` job) was no longer its own when it renewed,
 * completed or released it: the key expired, or the store lost it (Redis restarted without
 * persistence, a replica that had not received the claim was promoted) and another delivery
 * may have claimed it and run the handler a second time, possibly at the same moment.
 *
 * Nothing can undo that second run; this error makes it visible. Fulfilment that is also
 * idempotent on the merchant's own order state (as `confirmDeposit` does) absorbs it.
 * Code `CLAIM_LOST`, stage `'store'`, not retryable.
 *
 * @example
 * ```ts
 * createWebhookHandler({
 *   verifier, onEvent,
 *   onError(error) {
 *     if (error instanceof ClaimLostError) alert(`webhook ledger lost ${error.key} during ${error.operation}`);
 *   },
 * });
 * ```
 */
export class ClaimLostError extends WebhookHandlerError {
  /** `'ClaimLostError'`, so logs show which error it is. */
  override name = 'ClaimLostError';
  /** The operation that found the claim gone. */
  readonly operation: ClaimLostOperation;
  /** The idempotency key (`payment:<id>:<status>` or `webhook:<id>`); no secret. */
  readonly key: string;

  constructor(operation: ClaimLostOperation, key: string) {
    super(
      'store',
      `claim lost at ${operation} (expired, or lost by the store): the handler may have run twice`,
      undefined,
      'CLAIM_LOST',
    );
    this.operation = operation;
    this.key = key;
  }

  override toJSON(): Record<string, unknown> {
    return { ...super.toJSON(), operation: this.operation, key: this.key };
  }
}
