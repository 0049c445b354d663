/**
 * What {@link createWebhookHandler} takes and answers: its options with their defaults and
 * ranges in one place, and the response the adapters write.
 *
 * @module
 */
import { ConfigurationError } from '../core/errors/base.js';
import type { Logger } from '../core/observe/log.js';
import { isTracer, type TracerLike } from '../core/observe/trace.js';
import type { WebhookHandlerError, WebhookVerificationError, WebhookVerificationReason } from './errors.js';
import { claimTimes, COMPLETED_TTL_MS } from './claim-and-run.js';
import { DEFAULT_HANDLER_TIMEOUT_MS } from './delivery-policy.js';
import type { WebhookEvent } from './events.js';
import type { WebhookRequest } from './request-parts.js';
import { MemoryWebhookStore } from './stores/memory.js';
import type { TransactionalWebhookStore, WebhookStore } from './stores/types.js';
import { isMilliseconds, milliseconds } from '../core/milliseconds.js';
import { WebhookVerifier, type WebhookVerifierOptions } from './verifier.js';

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
export type WebhookOutcome =
  'processed' | 'duplicate' | 'superseded' | 'in_flight' | 'rejected' | 'failed' | 'unavailable';

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
  /** 200 processed, duplicate or superseded (a later status of the payment was handled); 400/401 rejected; 409 in flight; 500 failed; 503 store unavailable or handler timed out. */
  readonly status: number;
  /** The JSON body to send. */
  readonly body: WebhookResponseBody;
  /** Response headers to add (`Retry-After` on 409 and 503). */
  readonly headers: Readonly<Record<string, string>>;
  /** The verified event, when verification passed. */
  readonly event?: WebhookEvent;
}

/** Context handed to the merchant's `onEvent` next to the event. */
export interface WebhookEventContext<Tx = undefined> {
  /** The idempotency key claimed for this run (`payment:<id>:<status>` or `webhook:<id>`). */
  readonly key: string;
  /**
   * The transaction of a {@link TransactionalWebhookStore} (the SQL ledger), which commits with
   * the claim and the done mark: write the order's fulfilment through it. `undefined` with a
   * plain {@link WebhookStore}.
   *
   * @example
   * ```ts
   * onEvent: (event, { tx }) => tx.query("UPDATE orders SET status = 'paid' WHERE reference_id = $1", [event.signed.reference_id]);
   * ```
   */
  readonly tx: Tx;
}

/** Options of {@link createWebhookHandler}; `Tx` is the transaction of a {@link TransactionalWebhookStore}. */
export interface WebhookHandlerOptions<Tx = undefined> {
  /** A verifier, or the options to build one (`{ apiKey }` is enough). */
  verifier: WebhookVerifier | WebhookVerifierOptions;
  /**
   * The merchant's handler. Acknowledged (2xx) only after it resolves; if it throws,
   * the claim is released and the gateway gets a 500, so its retry runs it again.
   */
  onEvent: (event: WebhookEvent, context: WebhookEventContext<Tx>) => unknown;
  /**
   * The idempotency store: a {@link WebhookStore} (claims with a lease, as `RedisWebhookStore`),
   * or a {@link TransactionalWebhookStore} that runs `onEvent` in its transaction (`tx`). A plain
   * store has no transaction: its `onEvent` gets `tx: undefined`, so it fits only a `Tx` that
   * admits `undefined`.
   *
   * @default a new {@link MemoryWebhookStore} (one process only)
   */
  store?: (undefined extends Tx ? WebhookStore : never) | TransactionalWebhookStore<Tx> | undefined;
  /**
   * What to deduplicate by.
   *
   * @default 'payment'
   */
  idempotency?: WebhookIdempotency | undefined;
  /**
   * How long a claim lasts without renewal, in ms. While the handler runs, the claim is
   * renewed every third of this (if the store has `renew`), so a live handler keeps it through
   * a stall (a blocked event loop, a paused Redis, a failover) shorter than about this long;
   * the TTL also bounds how long a handler that crashed keeps its callback blocked.
   *
   * The trade-off, which a lease cannot avoid (a stall looks like a crash): the default (30 s)
   * never lets a retry run a stalled live handler a second time, and a crashed handler's
   * callback is recovered by the reconciliation job (examples/reconcile.ts) or by a
   * transactional store. `4_000` (under 4.8 s) lets the gateway's third delivery run a crashed
   * handler on another process, inside the delivery window, but a live handler stalled for more
   * than about 4 s then runs twice (`deliveryAfterCrash` says which delivery a TTL lets
   * through; docs/fleet.md). A whole number from 1 to 2^31 − 1.
   *
   * @example
   * ```ts
   * createWebhookHandler({ verifier, onEvent, inFlightTtlMs: 4_000 }); // in-window recovery, stalls over 4 s run twice
   * ```
   *
   * @default 30_000
   */
  inFlightTtlMs?: number | undefined;
  /**
   * How long the gateway waits for an answer while the handler runs, in ms. After it the
   * gateway gets 503 `in_flight` (so it retries); the handler keeps running and keeps its
   * claim, and its result is recorded when it settles. With a transactional store
   * (`SqlLedger`) it bounds the whole run instead: getting a connection, the claim, the
   * handler and COMMIT; past it the transaction is rolled back (503, nothing committed). Keep
   * it below the gateway's own wait for an answer (the sandbox's: 10 s per attempt), so an
   * attempt is never counted failed while its run commits later (docs/webhooks.md).
   *
   * @example
   * ```ts
   * createWebhookHandler({ verifier, onEvent, handlerTimeoutMs: 5_000 });
   * ```
   *
   * @default 8_000 (below the sandbox's 10 s per delivery attempt)
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
   * @default 86_400_000 (24 h), or twice the tolerance when that is longer
   */
  completedTtlMs?: number | undefined;
  /**
   * Called with every failure worth a log line: verification failures
   * ({@link WebhookVerificationError}), handler or store failures
   * ({@link WebhookHandlerError}, original error in `cause`), a lost claim (`ClaimLostError`,
   * code `CLAIM_LOST`: the handler may have run twice) and store warnings (`foreign_value`,
   * `under_replicated`); not a superseded callback, which is an outcome like a duplicate (the
   * response and the span say it). May be async; whatever it
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
  /**
   * Where refused and failed callbacks are logged, one line each: `console`, a pino or
   * winston logger, or any object with `debug`/`info`/`warn`/`error` (the client's
   * `logger` shape). `warn` for a refused callback (400/401) and ledger warnings; `error` for a failed one (500, 503) and a lost claim (`CLAIM_LOST`). Each line
   * has the error's code and fixed message and the signed `webhook_id`, `payment_id` and
   * status; never the body, the signature, a key, or the text of what `onEvent` threw (its
   * name only: `onError` gets the error itself). Without it nothing is logged.
   *
   * @example
   * ```ts
   * createWebhookHandler({ verifier, onEvent, logger: console });
   * createExpressMiddleware({ verifier, onEvent, logger: pino() });
   * ```
   */
  logger?: Logger | undefined;
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
  readonly store: WebhookStore | TransactionalWebhookStore;
  /**
   * The logger it writes refused and failed callbacks to (the adapters write theirs there too).
   *
   * @example
   * ```ts
   * createExpressMiddleware(createWebhookHandler({ verifier, onEvent, logger: console })); // the 413s log there too
   * ```
   */
  readonly logger?: Logger | undefined;
}

/** The options after defaults and range checks. */
export interface ResolvedHandlerOptions<Tx> {
  readonly verifier: WebhookVerifier;
  readonly store: WebhookStore | TransactionalWebhookStore<Tx>;
  readonly mode: WebhookIdempotency;
  readonly inFlightTtlMs: number;
  readonly completedTtlMs: number;
  readonly handlerTimeoutMs: number;
  readonly maxRenewalMs: number;
  readonly onEvent: WebhookHandlerOptions<Tx>['onEvent'];
  readonly onError: WebhookHandlerOptions<Tx>['onError'];
  readonly tracer: TracerLike | undefined;
  readonly logger: Logger | undefined;
}

function loggerOption(logger: Logger | undefined): Logger | undefined {
  if (logger === undefined) return undefined;
  const methods = logger as Partial<Record<'warn' | 'error', unknown>> | null; // a JavaScript caller may pass anything; each method is checked below
  if (typeof methods?.warn !== 'function' || typeof methods.error !== 'function') {
    throw new ConfigurationError('logger must have warn and error methods, as console and pino do', 'logger');
  }
  return logger;
}

/** Applies the defaults and refuses, with a {@link ConfigurationError}, what cannot work. */
export function resolveHandlerOptions<Tx>(options: WebhookHandlerOptions<Tx>): ResolvedHandlerOptions<Tx> {
  if (options === null || typeof options !== 'object')
    throw new ConfigurationError('createWebhookHandler needs options');
  if (typeof options.onEvent !== 'function') throw new ConfigurationError('onEvent must be a function', 'onEvent');
  const verifier =
    options.verifier instanceof WebhookVerifier ? options.verifier : new WebhookVerifier(options.verifier);
  const mode = options.idempotency ?? 'payment';
  if (mode !== 'payment' && mode !== 'webhook') {
    throw new ConfigurationError("idempotency must be 'payment' or 'webhook'", 'idempotency');
  }
  // The default follows a tolerance over 12 h, so only a completedTtlMs the merchant set is refused.
  const leastCompletedMs = Math.ceil(2e3 * verifier.toleranceSeconds);
  const completedTtlMs = options.completedTtlMs ?? Math.max(COMPLETED_TTL_MS, leastCompletedMs);
  if (!isMilliseconds(completedTtlMs, leastCompletedMs)) {
    throw new ConfigurationError(
      'completedTtlMs must be at least twice the tolerance, or a replay could outlive its record',
      'completedTtlMs',
    );
  }
  const times = claimTimes({ ...options, completedTtlMs });
  if (options.tracer !== undefined && !isTracer(options.tracer)) {
    throw new ConfigurationError('tracer must be an OpenTelemetry Tracer (startActiveSpan)', 'tracer');
  }
  return {
    verifier,
    store: options.store ?? new MemoryWebhookStore(),
    mode,
    ...times,
    handlerTimeoutMs: milliseconds(options.handlerTimeoutMs ?? DEFAULT_HANDLER_TIMEOUT_MS, 'handlerTimeoutMs'),
    onEvent: options.onEvent,
    onError: options.onError,
    tracer: options.tracer,
    logger: loggerOption(options.logger),
  };
}
