/**
 * Exactly-once work through a {@link WebhookStore}: claim the key, run, then mark it done or
 * release it. The webhook handler runs callbacks through it; a reconciliation job runs its
 * fulfilment through the same function, store and key, so the two never both run.
 *
 * @module
 */
import { keepClaim, recordDone, releaseClaim, reportWarning, unrecorded } from './claim.js';
import { DEFAULT_IN_FLIGHT_TTL_MS } from './delivery-policy.js';
import { WebhookHandlerError } from './errors.js';
import { canSupersede, lifecycleRank } from './lifecycle.js';
import type { PaymentOrder, WebhookStore } from './stores/types.js';

/**
 * The key the webhook handler claims for a payment outcome (its default `'payment'`
 * idempotency): one fulfilment per `payment_id` and terminal status.
 *
 * @example
 * ```ts
 * await runOnce(store, paymentKey(status.payment_id, status.status), () => fulfil(status));
 * ```
 */
export function paymentKey(paymentId: string, status: string): string {
  return `payment:${paymentId}:${status}`;
}

/** Options of {@link runOnce}; the defaults are the webhook handler's at its default tolerance. */
export interface RunOnceOptions {
  /** How long the claim lasts while `fn` runs, in ms (renewed every third of it while `fn` runs). @default 4_000 */
  inFlightTtlMs?: number | undefined;
  /** How long a finished key is remembered, in ms. @default 86_400_000 */
  completedTtlMs?: number | undefined;
  /** For how long, at most, the claim of a running `fn` is renewed, in ms. @default 600_000 */
  maxRenewalMs?: number | undefined;
  /**
   * Told about store failures after `fn` ran (release or complete failed) and about a claim
   * lost while it ran (a `ClaimLostError`, code `CLAIM_LOST`: `fn` may have run elsewhere too).
   * It may be async; its own failure, thrown or rejected, is ignored.
   */
  onError?: ((error: WebhookHandlerError) => unknown) | undefined;
  /**
   * The payment whose outcome `fn` fulfils: with it, `runOnce` keeps the webhook handler's
   * order of a payment's statuses. An outcome is not run once a later status of the same
   * payment was handled (a SUCCESS after its REFUNDED: `superseded`), and a REFUNDED run here
   * keeps a SUCCESS callback or run from fulfilling later. Give it whenever `key` is a
   * {@link paymentKey}; a status record from `payments.retrieve` fits as it is.
   *
   * @example
   * ```ts
   * await runOnce(store, paymentKey(status.payment_id, status.status), () => fulfil(status), { payment: status });
   * ```
   */
  payment?:
    | {
        /** The payment's `payment_id`, as in {@link paymentKey}. */
        readonly payment_id: string;
        /** The status `fn` fulfils, as in {@link paymentKey}. */
        readonly status: string;
      }
    | undefined;
}

/** How {@link runOnce} ended. */
export type RunOnceResult<T> =
  /** `fn` ran here and finished; the key is now done. */
  | {
      /** `'processed'`: `fn` ran here. */
      readonly outcome: 'processed';
      /** What `fn` returned. */
      readonly value: T;
    }
  /** Already done (by a callback or an earlier run): `fn` did not run. */
  | {
      /** `'duplicate'`: already done, `fn` did not run. */
      readonly outcome: 'duplicate';
    }
  /** A later status of the payment was handled (given `payment`): `fn` did not run, and must not. */
  | {
      /** `'superseded'`: a later status of the same payment was handled, `fn` did not run. */
      readonly outcome: 'superseded';
    }
  /** Somebody else is running it right now: `fn` did not run; try again later. */
  | {
      /** `'in_flight'`: running elsewhere right now, `fn` did not run. */
      readonly outcome: 'in_flight';
    };

/**
 * Runs `fn` at most once per `key` across everything sharing `store`. Throws a
 * {@link WebhookHandlerError}: stage `'store'` when the claim failed (nothing ran), stage
 * `'handler'` when `fn` threw (the claim was released, so a later run tries again; the original
 * error is its `cause`).
 *
 * @example
 * ```ts
 * import { paymentKey, runOnce } from 'myr-gateway/webhooks';
 *
 * const result = await runOnce(handler.store, paymentKey(payment.payment_id, payment.status), () => fulfil(payment));
 * if (result.outcome === 'in_flight') retryLater(payment);
 * ```
 */
export async function runOnce<T>(store: WebhookStore, key: string, fn: () => T | Promise<T>, options: RunOnceOptions = {}): Promise<RunOnceResult<T>> {
  const { inFlightTtlMs = DEFAULT_IN_FLIGHT_TTL_MS, completedTtlMs = 86_400_000, maxRenewalMs = 600_000, onError, payment } = options;
  const order: PaymentOrder | undefined = payment && { paymentId: payment.payment_id, rank: lifecycleRank(payment.status) };
  const report = (error: WebhookHandlerError) => {
    try {
      // An async onError that rejects must not become an unhandled rejection either.
      void Promise.resolve(onError?.(error)).catch(() => undefined);
    } catch {
      // A failing logger must not change the outcome.
    }
  };
  // Finished in this process (by a callback or an earlier run) but never recorded: never again.
  if (await unrecorded.settle(store, key, completedTtlMs)) return { outcome: 'duplicate' };
  let claim;
  try {
    claim = await store.claim(key, inFlightTtlMs, order);
  } catch (error) {
    throw new WebhookHandlerError('store', 'the idempotency store failed to claim the key', error);
  }
  if (!claim.acquired) return { outcome: claim.state === 'done' ? 'duplicate' : claim.state };

  // The same claim life as a callback's: renewed while `fn` runs, the result recorded with retries.
  reportWarning(claim.warning, report);
  const lease = keepClaim(store, key, claim.token, inFlightTtlMs, maxRenewalMs, report);
  let value: T;
  try {
    value = await fn();
  } catch (error) {
    await releaseClaim(store, key, claim.token, lease, report);
    throw new WebhookHandlerError('handler', 'the handler threw; the claim was released for a retry', error);
  }
  // As the handler does: only a status that can supersede another (REFUNDED) raises the payment's mark.
  await recordDone(store, key, claim.token, completedTtlMs, lease, report, payment && canSupersede(payment.status) ? order : undefined);
  return { outcome: 'processed', value };
}
