/**
 * Exactly-once callback handling, framework-neutral. The adapters in `adapters/` only
 * read the request and write the {@link WebhookResponse} this returns.
 *
 * @module
 */
import { ConfigurationError } from '../core/errors.js';
import { isTracer, type TracerLike } from '../core/trace.js';
import { WebhookHandlerError, WebhookVerificationError, type WebhookVerificationReason } from './errors.js';
import { TIMED_OUT, completeWithRetries, keepClaim, settle, settleWithin, type Settled } from './claim.js';
import type { WebhookEvent } from './events.js';
import { MemoryWebhookStore } from './stores/memory.js';
import type { WebhookStore } from './stores/types.js';
import { traced } from './tracing.js';
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
  /** Whether the callback was handled (now or before). */
  readonly ok: boolean;
  /** How the delivery ended. */
  readonly outcome: WebhookOutcome;
  /** The verification failure, when `outcome` is `rejected`. */
  readonly reason?: WebhookVerificationReason;
}

/** The answer to give the gateway: a status code and a small JSON body. */
export interface WebhookResponse {
  /** 200 processed or duplicate; 400/401 rejected; 409 in flight; 500 failed; 503 store unavailable or handler timed out. */
  readonly status: number;
  /** The JSON body to send. */
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
   * While the handler runs, the claim is renewed every third of this (if the store has
   * `renew`), so a slow handler keeps it; the TTL only matters when the process dies.
   *
   * @default 60_000
   */
  inFlightTtlMs?: number | undefined;
  /**
   * How long the gateway waits for an answer while the handler runs, in ms. After it the
   * gateway gets 503 `in_flight` (so it retries); the handler keeps running and keeps its
   * claim, and its result is recorded when it settles. Keep it below the gateway's own
   * request timeout.
   *
   * @example
   * ```ts
   * createWebhookHandler({ verifier, onEvent, handlerTimeoutMs: 10_000 });
   * ```
   *
   * @default 25_000
   */
  handlerTimeoutMs?: number | undefined;
  /**
   * For how long, at most, the claim of a running handler is renewed, in ms. A handler
   * that never settles then loses its claim `inFlightTtlMs` later, so the callback is not
   * blocked for ever (a later delivery may run it again).
   *
   * @example
   * ```ts
   * createWebhookHandler({ verifier, onEvent, maxRenewalMs: 30 * 60_000 });
   * ```
   *
   * @default 600_000 (10 min)
   */
  maxRenewalMs?: number | undefined;
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
   * ({@link WebhookHandlerError}, original error in `cause`). May be async; whatever it
   * throws or rejects with is swallowed, so a failing logger never changes the answer or
   * crashes the process.
   */
  onError?: ((error: WebhookVerificationError | WebhookHandlerError, event?: WebhookEvent) => unknown) | undefined;
  /**
   * An OpenTelemetry tracer: each delivery handled becomes a `myr-gateway webhook` span with
   * the outcome, the answer's status and the signed webhook, payment and reference ids, never
   * the body, the signature or a key. Without it the webhooks entry loads no tracing at all.
   *
   * @example
   * ```ts
   * import { trace } from '@opentelemetry/api';
   * createWebhookHandler({ verifier, onEvent, tracer: trace.getTracer('checkout') });
   * ```
   */
  tracer?: TracerLike | undefined;
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
  /** The verifier it checks signatures with. */
  readonly verifier: WebhookVerifier;
  /** The idempotency store it claims keys in. */
  readonly store: WebhookStore;
}

const JSON_HEADERS: Readonly<Record<string, string>> = Object.freeze({});
const RETRY_HEADERS: Readonly<Record<string, string>> = Object.freeze({ 'retry-after': '1' });
/** Most keys remembered as finished-but-unrecorded (the store failed to complete them). */
const MAX_UNRECORDED = 10_000;

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

function positive(value: number, name: string): number {
  if (typeof value !== 'number' || !Number.isFinite(value) || value <= 0) {
    throw new ConfigurationError(`${name} must be a positive number of milliseconds`, name);
  }
  return value;
}

/** The idempotency key of an event under a mode. */
export function idempotencyKey(event: WebhookEvent, mode: WebhookIdempotency): string {
  const s = event.signed;
  // Only signed fields: an attacker cannot steer a delivery onto another key.
  return mode === 'webhook' ? `webhook:${s.webhook_id}` : `payment:${s.payment_id}:${s.status}`;
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
  const handlerTimeoutMs = positive(options.handlerTimeoutMs ?? 25_000, 'handlerTimeoutMs');
  const maxRenewalMs = positive(options.maxRenewalMs ?? 600_000, 'maxRenewalMs');
  const { onEvent, onError, tracer } = options;
  if (tracer !== undefined && !isTracer(tracer)) throw new ConfigurationError('tracer must be an OpenTelemetry Tracer (with startActiveSpan)', 'tracer');
  /** Keys whose handler finished but that the store failed to record: key to claim token. */
  const unrecorded = new Map<string, string>();

  function report(error: WebhookVerificationError | WebhookHandlerError, event?: WebhookEvent): void {
    if (!onError) return;
    try {
      const result = onError(error, event) as { then?: unknown } | null | undefined;
      if (result !== null && typeof result === 'object' && typeof result.then === 'function') {
        (result as PromiseLike<unknown>).then(undefined, () => {});
      }
    } catch {
      // A failing logger must not change the answer to the gateway.
    }
  }

  /** The handler settled: record it (done, or released for a retry) and say what to answer. */
  async function finish(event: WebhookEvent, key: string, token: string, result: Settled, stopRenewal: () => void): Promise<WebhookResponse> {
    if (!result.ok) {
      stopRenewal();
      report(new WebhookHandlerError('handler', 'the webhook handler threw; the claim was released for a retry', result.error), event);
      try {
        await store.release(key, token);
      } catch (releaseError) {
        report(new WebhookHandlerError('store', 'the idempotency store failed to release the claim', releaseError), event);
      }
      return { status: 500, body: { ok: false, outcome: 'failed' }, headers: JSON_HEADERS, event };
    }
    const failed = await completeWithRetries(store, key, token, completedTtlMs);
    stopRenewal();
    if (failed) {
      // The handler did finish: acknowledging is right. This process remembers it and answers
      // duplicate; another process may run it again once the claim expires (docs/webhooks.md).
      if (unrecorded.size >= MAX_UNRECORDED) unrecorded.delete(unrecorded.keys().next().value as string);
      unrecorded.set(key, token);
      report(
        new WebhookHandlerError('store', 'the idempotency store failed, three times, to record a finished callback', failed.error),
        event,
      );
    }
    return { status: 200, body: { ok: true, outcome: 'processed' }, headers: JSON_HEADERS, event };
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
    const pendingToken = unrecorded.get(key);
    if (pendingToken !== undefined) {
      // Handled here before, but the store never recorded it: try again, and never rerun it.
      if (!(await completeWithRetries(store, key, pendingToken, completedTtlMs))) unrecorded.delete(key);
      return { status: 200, body: { ok: true, outcome: 'duplicate' }, headers: JSON_HEADERS, event };
    }
    let claim;
    try {
      claim = await store.claim(key, inFlightTtlMs);
    } catch (error) {
      report(new WebhookHandlerError('store', 'the idempotency store failed to claim the callback', error), event);
      return { status: 503, body: { ok: false, outcome: 'unavailable' }, headers: RETRY_HEADERS, event };
    }
    if (!claim.acquired) {
      return claim.state === 'done'
        ? { status: 200, body: { ok: true, outcome: 'duplicate' }, headers: JSON_HEADERS, event }
        : { status: 409, body: { ok: false, outcome: 'in_flight' }, headers: RETRY_HEADERS, event };
    }

    const { token } = claim;
    const lease = keepClaim(store, key, token, inFlightTtlMs, maxRenewalMs, (stage, message, cause) =>
      report(new WebhookHandlerError(stage, message, cause), event),
    );
    const settled = settle(() => onEvent(event, { key }));
    const result = await settleWithin(settled, handlerTimeoutMs);
    if (result === TIMED_OUT) {
      report(
        new WebhookHandlerError('handler', 'the webhook handler did not settle within handlerTimeoutMs: answered 503, the claim is kept until it settles', undefined),
        event,
      );
      void settled.then((late) => finish(event, key, token, late, lease.stop)).catch(() => {});
      return { status: 503, body: { ok: false, outcome: 'in_flight' }, headers: RETRY_HEADERS, event };
    }
    return finish(event, key, token, result, lease.stop);
  }

  return {
    handle: traced(tracer, (request) =>
      handle(request).catch(() => ({ status: 500, body: { ok: false, outcome: 'failed' as const }, headers: JSON_HEADERS })),
    ),
    verifier,
    store,
  };
}
