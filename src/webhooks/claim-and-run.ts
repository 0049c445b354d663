/**
 * The one claim-and-run path of the webhook handler and `runOnce`: claim the key (or, on a
 * {@link TransactionalWebhookStore}, hand it the whole run), run the work, then record it done or
 * release it. It answers a {@link LedgerRun} and reports nothing of the outcome itself: the
 * handler turns it into an HTTP answer, `runOnce` into its result or its thrown error.
 *
 * @module
 */
import {
  TIMED_OUT,
  keepClaim,
  reportWarning,
  settle,
  settleWithin,
  unrecorded,
  type ClaimReport,
  type Settled,
} from './claim.js';
import { DEFAULT_IN_FLIGHT_TTL_MS } from './delivery-policy.js';
import { canSupersede, lifecycleRank } from './lifecycle.js';
import type { LedgerRun, PaymentOrder, TransactionalWebhookStore, WebhookStore } from './stores/types.js';
import { milliseconds } from '../core/milliseconds.js';

/** @internal How long a finished key is remembered unless told otherwise: 24 h. */
export const COMPLETED_TTL_MS = 86_400_000;

/** @internal The claim times, after their defaults and the range rule of every millisecond option. */
export interface ClaimTimes {
  readonly inFlightTtlMs: number;
  readonly completedTtlMs: number;
  readonly maxRenewalMs: number;
}

/**
 * @internal The claim times the handler and `runOnce` share: `inFlightTtlMs` (the delivery
 * policy's default), `completedTtlMs` (24 h, or `completedDefault`), `maxRenewalMs` (10 min),
 * each refused with a `ConfigurationError` naming it when not a whole number of ms a timer holds.
 */
export function claimTimes(
  given: {
    readonly inFlightTtlMs?: number | undefined;
    readonly completedTtlMs?: number | undefined;
    readonly maxRenewalMs?: number | undefined;
  },
  completedDefault = COMPLETED_TTL_MS,
): ClaimTimes {
  return {
    inFlightTtlMs: milliseconds(given.inFlightTtlMs ?? DEFAULT_IN_FLIGHT_TTL_MS, 'inFlightTtlMs'),
    completedTtlMs: milliseconds(given.completedTtlMs ?? completedDefault, 'completedTtlMs'),
    maxRenewalMs: milliseconds(given.maxRenewalMs ?? 600_000, 'maxRenewalMs'),
  };
}

/**
 * @internal Runs `work` at most once per `key` across everything sharing `store`, keeping the
 * order of the statuses of `payment` (its signed id and status) when given. `report` is told
 * about the claim's problems that do not change the outcome (store warnings, a lost claim, a
 * failed release); `timeoutMs` is how long to wait for the work (none for `runOnce`). A
 * {@link TransactionalWebhookStore} gets the whole run; on a plain store the claim is renewed
 * while the work runs, then recorded done (retried; remembered in this process when the store
 * keeps failing) or released when the work threw. When the work outlives `timeoutMs` the answer
 * is `timed_out` and the claim is kept, and recorded once the work settles.
 */
export async function claimAndRun<T, Tx>(
  store: WebhookStore | TransactionalWebhookStore<Tx>,
  key: string,
  work: (tx: Tx) => T | Promise<T>,
  { inFlightTtlMs, completedTtlMs, maxRenewalMs }: ClaimTimes,
  report: ClaimReport,
  payment: { readonly payment_id: string; readonly status: string } | undefined,
  timeoutMs?: number,
): Promise<LedgerRun<T>> {
  const order: PaymentOrder | undefined = payment && {
    paymentId: payment.payment_id,
    rank: lifecycleRank(payment.status),
  };
  // Only a status that can supersede another (REFUNDED) raises the payment's mark.
  const raiseMark = !!payment && canSupersede(payment.status);
  if (store.transactional) {
    try {
      return await store.run(key, work, { order, raiseMark, timeoutMs, completedTtlMs });
    } catch (error) {
      return { outcome: 'unavailable', error };
    }
  }
  // Finished in this process (by a callback or an earlier run) but never recorded: never again.
  if (await unrecorded.settle(store, key, completedTtlMs)) return { outcome: 'duplicate' };
  let claim;
  try {
    claim = await store.claim(key, inFlightTtlMs, order);
  } catch (error) {
    return { outcome: 'unavailable', error };
  }
  if (!claim.acquired) return { outcome: claim.state === 'done' ? 'duplicate' : claim.state };

  const { token } = claim;
  reportWarning(claim.warning, report);
  const lease = keepClaim(store, key, token, inFlightTtlMs, maxRenewalMs, report);
  // A plain store has no transaction: the public types (the handler's `store` option, runOnce's
  // store) take one only where Tx admits undefined, the tx its work then gets.
  const settled = settle(() => work(undefined as Tx));
  const finish = async (result: Settled<T>): Promise<LedgerRun<T>> => {
    if (!result.ok) {
      await lease.release();
      return { outcome: 'failed', error: result.error };
    }
    await lease.record(completedTtlMs, raiseMark ? order : undefined);
    return { outcome: 'processed', value: result.value };
  };
  const result = timeoutMs === undefined ? await settled : await settleWithin(settled, timeoutMs);
  if (result === TIMED_OUT) {
    void settled.then(finish).catch(() => {});
    return { outcome: 'timed_out' };
  }
  return finish(result);
}
