/**
 * Exactly-once callback handling, framework-neutral. The adapters in `adapters/` only
 * read the request and write the {@link WebhookResponse} this returns.
 *
 * @module
 */
import { TIMED_OUT, keepClaim, recordDone, releaseClaim, reportWarning, settle, settleWithin, unrecorded, type ClaimReport, type Lease, type Settled } from './claim.js';
import { WebhookHandlerError, WebhookVerificationError, type WebhookVerificationReason } from './errors.js';
import type { WebhookEvent } from './events.js';
import {
  resolveHandlerOptions,
  type WebhookHandler,
  type WebhookHandlerOptions,
  type WebhookIdempotency,
  type WebhookResponse,
} from './handler-options.js';
import { canSupersede, lifecycleRank } from './lifecycle.js';
import { webhookLog, type WebhookLogLevel } from './log.js';
import type { WebhookRequest } from './request-parts.js';
import type { PaymentOrder } from './stores/types.js';
import { paymentKey } from './run-once.js';
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

/** Where the event stands in its payment's life, for the store's per-payment high-water mark. */
function paymentOrder(event: WebhookEvent): PaymentOrder {
  return { paymentId: event.signed.payment_id, rank: lifecycleRank(event.signed.status) };
}

/** Builds a {@link WebhookHandler} from a handler or its options (adapters take either). */
export function toWebhookHandler(handlerOrOptions: WebhookHandler | WebhookHandlerOptions): WebhookHandler {
  return isHandler(handlerOrOptions) ? handlerOrOptions : createWebhookHandler(handlerOrOptions);
}

function isHandler(value: WebhookHandler | WebhookHandlerOptions): value is WebhookHandler {
  return typeof (value as Partial<WebhookHandler>).handle === 'function'; // a guard: only reads the property it checks
}

/**
 * Creates the exactly-once callback handler behind every adapter.
 *
 * 1. verify (signature first); failure: 401 (signature) or 400 (malformed, stale, …);
 * 2. claim the idempotency key atomically in the store;
 *    already done: 200 without running; in flight elsewhere: 409 so the gateway retries;
 *    older than a status already handled for the payment (SUCCESS after REFUNDED): 200
 *    `superseded`, without running;
 * 3. run `onEvent`; if it throws: release the claim, 500 (the retry runs it again);
 * 4. mark the key done, 200.
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
export function createWebhookHandler(options: WebhookHandlerOptions): WebhookHandler {
  const { verifier, store, mode, inFlightTtlMs, completedTtlMs, handlerTimeoutMs, maxRenewalMs, onEvent, onError, tracer, logger } =
    resolveHandlerOptions(options);

  const log = webhookLog(logger);
  /** Tells `onError` and the logger (one line) about a refused or failed callback, or a ledger problem. */
  function report(error: WebhookVerificationError | WebhookHandlerError, event?: WebhookEvent, level: WebhookLogLevel = 'error'): void {
    log(level, error, event);
    if (!onError) return;
    try {
      // An async logger's rejection is swallowed too (never an unhandled rejection).
      Promise.resolve(onError(error, event)).catch(() => {});
    } catch {
      // A failing logger must not change the answer to the gateway.
    }
  }

  /** The handler settled: record it (done, or released for a retry) and say what to answer. */
  async function finish(event: WebhookEvent, key: string, token: string, result: Settled, lease: Lease): Promise<WebhookResponse> {
    // Only a status that can supersede a callback (REFUNDED) raises the payment's mark.
    const order = canSupersede(event.signed.status) ? paymentOrder(event) : undefined;
    const toOnError: ClaimReport = (error, level) => report(error, event, level);
    if (!result.ok) {
      report(new WebhookHandlerError('handler', 'the webhook handler threw; the claim was released for a retry', result.error), event);
      await releaseClaim(store, key, token, lease, toOnError);
      return { status: 500, body: { ok: false, outcome: 'failed' }, headers: JSON_HEADERS, event };
    }
    await recordDone(store, key, token, completedTtlMs, lease, toOnError, order);
    return { status: 200, body: { ok: true, outcome: 'processed' }, headers: JSON_HEADERS, event };
  }

  async function handle(request: WebhookRequest): Promise<WebhookResponse> {
    let event: WebhookEvent;
    try {
      event = await verifier.verify(request);
    } catch (error) {
      const failure =
        error instanceof WebhookVerificationError ? error : new WebhookVerificationError('malformed', 'the callback could not be read');
      report(failure, undefined, failure.reason === 'internal' ? 'error' : 'warn');
      return {
        status: statusFor(failure.reason),
        body: { ok: false, outcome: 'rejected', reason: failure.reason },
        headers: JSON_HEADERS,
      };
    }

    const key = idempotencyKey(event, mode);
    // Handled in this process before, but the store never recorded it: try again, never rerun it.
    if (await unrecorded.settle(store, key, completedTtlMs)) {
      return { status: 200, body: { ok: true, outcome: 'duplicate' }, headers: JSON_HEADERS, event };
    }
    let claim;
    try {
      claim = await store.claim(key, inFlightTtlMs, paymentOrder(event));
    } catch (error) {
      report(new WebhookHandlerError('store', 'the idempotency store failed to claim the callback', error), event);
      return { status: 503, body: { ok: false, outcome: 'unavailable' }, headers: RETRY_HEADERS, event };
    }
    if (!claim.acquired) {
      if (claim.state === 'superseded') {
        report(
          new WebhookHandlerError('store', 'superseded: a later status of the payment was handled; acknowledged, not run', undefined),
          event,
          'warn',
        );
        return { status: 200, body: { ok: true, outcome: 'superseded' }, headers: JSON_HEADERS, event };
      }
      return claim.state === 'done'
        ? { status: 200, body: { ok: true, outcome: 'duplicate' }, headers: JSON_HEADERS, event }
        : { status: 409, body: { ok: false, outcome: 'in_flight' }, headers: RETRY_HEADERS, event };
    }

    const { token } = claim;
    reportWarning(claim.warning, (error, level) => report(error, event, level));
    const lease = keepClaim(store, key, token, inFlightTtlMs, maxRenewalMs, (error) => report(error, event));
    const settled = settle(() => onEvent(event, { key }));
    const result = await settleWithin(settled, handlerTimeoutMs);
    if (result === TIMED_OUT) {
      report(
        new WebhookHandlerError('handler', 'the webhook handler did not settle within handlerTimeoutMs: answered 503, the claim is kept until it settles', undefined),
        event,
      );
      void settled.then((late) => finish(event, key, token, late, lease)).catch(() => {});
      return { status: 503, body: { ok: false, outcome: 'in_flight' }, headers: RETRY_HEADERS, event };
    }
    return finish(event, key, token, result, lease);
  }

  return {
    handle: traced(tracer, (request) =>
      handle(request).catch(() => ({ status: 500, body: { ok: false, outcome: 'failed' as const }, headers: JSON_HEADERS })),
    ),
    verifier,
    store,
    logger,
  };
}
