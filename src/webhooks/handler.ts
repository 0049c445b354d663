/**
 * Exactly-once callback handling, framework-neutral. The adapters in `adapters/` only
 * read the request and write the {@link WebhookResponse} this returns.
 *
 * @module
 */
import { claimAndRun } from './claim-and-run.js';
import { paymentKey } from './payment-key.js';
import { WebhookHandlerError, type WebhookVerificationError, type WebhookVerificationReason } from './errors.js';
import type { WebhookEvent } from './events.js';
import {
  resolveHandlerOptions,
  type WebhookHandler,
  type WebhookHandlerOptions,
  type WebhookIdempotency,
  type WebhookResponse,
  type WebhookResponseBody,
} from './handler-options.js';
import { webhookLog, type WebhookLogLevel } from './log.js';
import { asVerificationError, type WebhookRequest } from './request-parts.js';
import { traced } from './tracing.js';

const JSON_HEADERS: Readonly<Record<string, string>> = Object.freeze({});
const RETRY_HEADERS: Readonly<Record<string, string>> = Object.freeze({ 'retry-after': '1' });

function statusFor(reason: WebhookVerificationReason): number {
  switch (reason) {
    case 'missing_signature':
    case 'invalid_signature':
      return 401;
    case 'internal':
      return 500;
    default:
      return 400;
  }
}

/** The idempotency key of an event under a mode. */
export function idempotencyKey(event: WebhookEvent, mode: WebhookIdempotency): string {
  const s = event.signed;
  // Only signed fields: an attacker cannot steer a delivery onto another key.
  return mode === 'webhook' ? `webhook:${s.webhook_id}` : paymentKey(s.payment_id, s.status);
}

/** Builds a {@link WebhookHandler} from a handler or its options (adapters take either). */
export function toWebhookHandler<Tx>(handlerOrOptions: WebhookHandler | WebhookHandlerOptions<Tx>): WebhookHandler {
  return isHandler(handlerOrOptions) ? handlerOrOptions : createWebhookHandler(handlerOrOptions);
}

function isHandler<Tx>(value: WebhookHandler | WebhookHandlerOptions<Tx>): value is WebhookHandler {
  return typeof (value as Partial<WebhookHandler>).handle === 'function'; // a guard: only reads the property it checks
}

/**
 * Creates the exactly-once callback handler behind every adapter.
 *
 * 1. verify (signature first); failure: 401 (signature) or 400 (malformed, stale, …);
 * 2. claim the idempotency key atomically in the store;
 *    already done: 200 without running; in flight elsewhere: 409 so the gateway retries;
 *    older than a status already handled for the payment (SUCCESS after REFUNDED): 200
 *    `superseded`, without running (an outcome, not reported to `onError`);
 * 3. run `onEvent(event, { key, tx })`; if it throws: release the claim, 500 (the retry runs
 *    it again); not settled within `handlerTimeoutMs`: 503;
 * 4. mark the key done, 200.
 *
 * Steps 2 to 4 are the claim-and-run path `runOnce` shares; a `TransactionalWebhookStore`
 * does them in one transaction and `tx` is its transaction.
 *
 * @example
 * ```ts
 * const handler = createWebhookHandler({
 *   verifier: { apiKey: process.env.MYR_API_KEY! },
 *   async onEvent(event) {
 *     if (event.transaction_type === 'DEPOSIT' && event.signed.status === 'SUCCESS') {
 *       await orders.markPaid(event.signed.reference_id, event.signed.amount);
 *     }
 *   },
 * });
 * ```
 */
export function createWebhookHandler<Tx = undefined>(options: WebhookHandlerOptions<Tx>): WebhookHandler {
  const resolved = resolveHandlerOptions(options);
  const { verifier, store, mode, handlerTimeoutMs, onEvent, onError, tracer, logger } = resolved;

  const log = webhookLog(logger);
  /** Tells `onError` and the logger (one line) about a refused or failed callback, or a ledger problem. */
  function report(
    error: WebhookVerificationError | WebhookHandlerError,
    event?: WebhookEvent,
    level: WebhookLogLevel = 'error',
  ): void {
    log(level, error, event);
    if (!onError) return;
    try {
      // An async logger's rejection is swallowed too (never an unhandled rejection).
      Promise.resolve(onError(error, event)).catch(() => {});
    } catch {
      // A failing logger must not change the answer to the gateway.
    }
  }

  async function handle(request: WebhookRequest): Promise<WebhookResponse> {
    let event: WebhookEvent;
    try {
      event = await verifier.verify(request);
    } catch (error) {
      const failure = asVerificationError(error);
      report(failure, undefined, failure.reason === 'internal' ? 'error' : 'warn');
      return {
        status: statusFor(failure.reason),
        body: { ok: false, outcome: 'rejected', reason: failure.reason },
        headers: JSON_HEADERS,
      };
    }

    const key = idempotencyKey(event, mode);
    const run = await claimAndRun(
      store,
      key,
      (tx) => onEvent(event, { key, tx }),
      resolved,
      (error, level) => report(error, event, level),
      event.signed,
      handlerTimeoutMs,
    );
    const answer = (status: number, outcome: WebhookResponseBody['outcome']): WebhookResponse => ({
      status,
      body: { ok: status === 200, outcome },
      headers: status === 409 || status === 503 ? RETRY_HEADERS : JSON_HEADERS,
      event,
    });
    switch (run.outcome) {
      case 'failed':
        report(new WebhookHandlerError('handler', 'the webhook handler threw: released for a retry', run.error), event);
        return answer(500, 'failed');
      case 'timed_out':
        // Still running on a plain store (its claim kept until it settles), rolled back on a transactional one.
        report(
          new WebhookHandlerError(
            'handler',
            run.message ?? 'the webhook handler outlived handlerTimeoutMs: answered 503',
          ),
          event,
        );
        return answer(503, 'in_flight');
      case 'unavailable':
        report(
          new WebhookHandlerError('store', run.message ?? 'the idempotency store failed: answered 503', run.error),
          event,
        );
        return answer(503, 'unavailable');
      case 'in_flight':
        return answer(409, 'in_flight');
      default:
        return answer(200, run.outcome);
    }
  }

  return {
    handle: traced(tracer, (request) =>
      handle(request).catch(() => ({
        status: 500,
        body: { ok: false, outcome: 'failed' as const },
        headers: JSON_HEADERS,
      })),
    ),
    verifier,
    store,
    logger,
  };
}
