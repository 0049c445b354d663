/**
 * Exactly-once callback handling, framework-neutral. The adapters in `adapters/` only
 * read the request and write the {@link WebhookResponse} this returns.
 *
 * @module
 */
import { ConfigurationError } from '../core/errors.js';
import { type WebhookHandlerError, WebhookVerificationError, type WebhookVerificationReason } from './errors.js';
import type { WebhookEvent } from './events.js';
import { MemoryWebhookStore } from './stores/memory.js';
import { paymentKey, runOnce } from './run-once.js';
import type { WebhookStore } from './stores/types.js';
import { WebhookVerifier, type WebhookRequest, type WebhookVerifierOptions } from './verifier.js';

/**
 * What a callback is deduplicated by.
 *
 * - `'payment'` (default): one run per `payment_id` and terminal `status`. Covers
 *   retries of one delivery (same `webhook_id`) *and* a second delivery with a new
 *   `webhook_id` for the same outcome, which the spec asks merchants to absorb
 *   ("one fulfillment per payment"). A later, different status of the same payment
 *   (SUCCESS then REFUNDED) still runs.
 * - `'webhook'`: one run per `webhook_id` only. Your handler must then be idempotent
 *   per payment itself.
 */
export type WebhookIdempotency = 'payment' | 'webhook';

/** How a callback ended, for logs and metrics. */
export type WebhookOutcome = 'processed' | 'duplicate' | 'in_flight' | 'rejected' | 'failed' | 'unavailable';

/** The small JSON body the adapters send back. */
export interface WebhookResponseBody {
  readonly ok: boolean;
  readonly outcome: WebhookOutcome;
  /** The verification failure, when `outcome` is `rejected`. */
  readonly reason?: WebhookVerificationReason;
}

/** The answer to give the gateway: a status code and a small JSON body. */
export interface WebhookResponse {
  /** 200 processed or duplicate; 400/401 rejected; 409 in flight; 500/503 failed. */
  readonly status: number;
  readonly body: WebhookResponseBody;
  /** Response headers to add (`Retry-After` on 409 and 503). */
  readonly headers: Readonly<Record<string, string>>;
  /** The verified event, when verification passed. */
  readonly event?: WebhookEvent;
}

/** Context handed to the merchant's `onEvent` next to the event. */
export interface WebhookEventContext {
  /** The idempotency key claimed for this run (`payment:<id>:<status>` or `webhook:<id>`). */
  readonly key: string;
}

/** Options of {@link createWebhookHandler}. */
export interface WebhookHandlerOptions {
  /** A verifier, or the options to build one (`{ apiKey }` is enough). */
  verifier: WebhookVerifier | WebhookVerifierOptions;
  /**
   * The merchant's handler. Acknowledged (2xx) only after it resolves; if it throws,
   * the claim is released and the gateway gets a 500, so its retry runs it again.
   */
  onEvent: (event: WebhookEvent, context: WebhookEventContext) => unknown;
  /**
   * The idempotency store.
   *
   * @default a new {@link MemoryWebhookStore} (one process only)
   */
  store?: WebhookStore | undefined;
  /**
   * What to deduplicate by.
   *
   * @default 'payment'
   */
  idempotency?: WebhookIdempotency | undefined;
  /**
   * How long a claim lasts while the handler runs, in ms. If the process dies
   * mid-handler, a retry can take the key again after this long. Keep it above your
   * handler's worst-case duration.
   *
   * @default 60_000
   */
  inFlightTtlMs?: number | undefined;
  /**
   * How long a finished key is remembered, in ms. At least twice the verifier's
   * tolerance: a callback is accepted while its timestamp is within the tolerance on
   * either side of the receiver's clock, and a replay must find the record until then.
   *
   * @default 86_400_000 (24 h)
   */
  completedTtlMs?: number | undefined;
  /**
   * Called with every failure worth a log line: verification failures
   * ({@link WebhookVerificationError}) and handler or store failures
   * ({@link WebhookHandlerError}, original error in `cause`). Must not throw.
   */
  onError?: ((error: WebhookVerificationError | WebhookHandlerError, event?: WebhookEvent) => void) | undefined;
}

/** The exactly-once handler: verify, claim, run, complete or release. */
export interface WebhookHandler {
  /**
   * Handles one delivery and says what to answer. Never throws.
   *
   * @example
   * ```ts
   * const { status, body, headers } = await handler.handle({ body: rawBody, headers: req.headers });
   * ```
   */
  handle(request: WebhookRequest): Promise<WebhookResponse>;
  readonly verifier: WebhookVerifier;
  readonly store: WebhookStore;
}

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
export function toWebhookHandler(handlerOrOptions: WebhookHandler | WebhookHandlerOptions): WebhookHandler {
  return typeof (handlerOrOptions as WebhookHandler).handle === 'function'
    ? (handlerOrOptions as WebhookHandler)
    : createWebhookHandler(handlerOrOptions as WebhookHandlerOptions);
}

/**
 * Creates the exactly-once callback handler behind every adapter.
 *
 * 1. verify (signature first); failure: 401 (signature) or 400 (malformed, stale, …);
 * 2. claim the idempotency key atomically in the store;
 *    already done: 200 without running; in flight elsewhere: 409 so the gateway retries;
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
  if (options === null || typeof options !== 'object') throw new ConfigurationError('createWebhookHandler needs options');
  if (typeof options.onEvent !== 'function') throw new ConfigurationError('onEvent must be a function', 'onEvent');
  const verifier = options.verifier instanceof WebhookVerifier ? options.verifier : new WebhookVerifier(options.verifier);
  const store = options.store ?? new MemoryWebhookStore();
  const mode = options.idempotency ?? 'payment';
  if (mode !== 'payment' && mode !== 'webhook') {
    throw new ConfigurationError("idempotency must be 'payment' or 'webhook'", 'idempotency');
  }
  const inFlightTtlMs = options.inFlightTtlMs ?? 60_000;
  const completedTtlMs = options.completedTtlMs ?? 86_400_000;
  if (!Number.isFinite(inFlightTtlMs) || inFlightTtlMs <= 0) {
    throw new ConfigurationError('inFlightTtlMs must be a positive number', 'inFlightTtlMs');
  }
  if (!Number.isFinite(completedTtlMs) || completedTtlMs < 2 * verifier.toleranceSeconds * 1000) {
    throw new ConfigurationError(
      'completedTtlMs must be at least twice the tolerance, or a replay could outlive its record',
      'completedTtlMs',
    );
  }
  const { onEvent, onError } = options;

  function report(error: WebhookVerificationError | WebhookHandlerError, event?: WebhookEvent): void {
    if (!onError) return;
    try {
      onError(error, event);
    } catch {
      // A failing logger must not change the answer to the gateway.
    }
  }

  async function handle(request: WebhookRequest): Promise<WebhookResponse> {
    let event: WebhookEvent;
    try {
      event = await verifier.verify(request);
    } catch (error) {
      const failure =
        error instanceof WebhookVerificationError ? error : new WebhookVerificationError('malformed', 'the callback could not be read');
      report(failure);
      return {
        status: statusFor(failure.reason),
        body: { ok: false, outcome: 'rejected', reason: failure.reason },
        headers: JSON_HEADERS,
      };
    }

    const key = idempotencyKey(event, mode);
    let result;
    try {
      result = await runOnce(store, key, () => onEvent(event, { key }), { inFlightTtlMs, completedTtlMs, onError: (e) => report(e, event) });
    } catch (error) {
      const failure = error as WebhookHandlerError;
      report(failure, event);
      return failure.stage === 'store'
        ? { status: 503, body: { ok: false, outcome: 'unavailable' }, headers: RETRY_HEADERS, event }
        : { status: 500, body: { ok: false, outcome: 'failed' }, headers: JSON_HEADERS, event };
    }
    if (result.outcome === 'processed') return { status: 200, body: { ok: true, outcome: 'processed' }, headers: JSON_HEADERS, event };
    return result.outcome === 'duplicate'
      ? { status: 200, body: { ok: true, outcome: 'duplicate' }, headers: JSON_HEADERS, event }
      : { status: 409, body: { ok: false, outcome: 'in_flight' }, headers: RETRY_HEADERS, event };
  }

  return {
    handle: (request) =>
      handle(request).catch(() => ({ status: 500, body: { ok: false, outcome: 'failed' as const }, headers: JSON_HEADERS })),
    verifier,
    store,
  };
}
