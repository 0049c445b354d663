/**
 * Exactly-once work through a {@link WebhookStore}: claim the key, run, then mark it done or
 * release it. The webhook handler runs callbacks through it; a reconciliation job runs its
 * fulfilment through the same function, store and key, so the two never both run.
 *
 * @module
 */
import { claimAndRun, claimTimes } from './claim-and-run.js';
import { WebhookHandlerError } from './errors.js';
import { paymentOfKey } from './payment-key.js';
import type { TransactionalWebhookStore, WebhookStore } from './stores/types.js';

/** Options of {@link runOnce}; the defaults are the webhook handler's at its default tolerance. */
export interface RunOnceOptions {
  /**
   * How long the claim lasts while `fn` runs, in ms (renewed every third of it while `fn` runs,
   * so a stall shorter than about this long keeps it); a whole number from 1 to 2^31−1. A
   * shorter claim than a running one's never cuts it. See the handler's `inFlightTtlMs`.
   *
   * @default 30_000
   */
  inFlightTtlMs?: number | undefined;
  /** How long a finished key is remembered, in ms; a whole number from 1 to 2^31−1. @default 86_400_000 */
  completedTtlMs?: number | undefined;
  /** For how long, at most, the claim of a running `fn` is renewed, in ms; a whole number from 1 to 2^31−1. @default 600_000 */
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
   * {@link paymentKey}; a status record from `payments.retrieve` fits as it is. Left out, a key
   * of exactly paymentKey's shape (`payment:<payment_id>:<status>`, a status of the spec) gives
   * it: that key is the handler's own for that payment's outcome, so the run keeps the payment
   * as the handler does (the SQL ledger remembers it for good, not `completedTtlMs`).
   *
   * @default the payment a paymentKey `key` names; none for any other key
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
 * {@link WebhookHandlerError}: stage `'store'` when the store failed (nothing ran, or a
 * transactional store could not commit), stage `'handler'` when `fn` threw (the claim was
 * released, or the transaction rolled back, so a later run tries again; the original error is
 * its `cause`). A millisecond option out of range is a `ConfigurationError` naming it.
 *
 * `fn` gets `{ tx }`: the transaction of a {@link TransactionalWebhookStore} (the SQL ledger),
 * committed with the done mark; `undefined` with a plain {@link WebhookStore}.
 *
 * @example
 * ```ts
 * import { paymentKey, runOnce } from 'myr-gateway/webhooks';
 *
 * const result = await runOnce(handler.store, paymentKey(payment.payment_id, payment.status), () => fulfil(payment), {
 *   payment,
 * });
 * if (result.outcome === 'in_flight') retryLater(payment);
 * ```
 */
export async function runOnce<T, Tx = undefined>(
  // A plain store has no transaction: `tx` is then undefined, so it fits only a Tx that admits it.
  store: (undefined extends Tx ? WebhookStore : never) | TransactionalWebhookStore<Tx>,
  key: string,
  fn: (context: { readonly tx: Tx }) => T | Promise<T>,
  options: RunOnceOptions = {},
): Promise<RunOnceResult<T>> {
  const { onError, payment = paymentOfKey(key) } = options;
  const report = (error: WebhookHandlerError) => {
    try {
      // An async onError that rejects must not become an unhandled rejection either.
      void Promise.resolve(onError?.(error)).catch(() => undefined);
    } catch {
      // A failing logger must not change the outcome.
    }
  };
  const run = await claimAndRun(store, key, (tx: Tx) => fn({ tx }), claimTimes(options), report, payment);
  switch (run.outcome) {
    case 'failed':
    case 'timed_out':
      throw new WebhookHandlerError(
        'handler',
        'the handler threw or timed out; the claim was released for a retry',
        run.outcome === 'failed' ? run.error : undefined,
      );
    case 'unavailable':
      throw new WebhookHandlerError(
        'store',
        run.message ?? 'the idempotency store failed to claim or record the key',
        run.error,
      );
    default:
      return run;
  }
}
