/**
 * The idempotency key of a payment outcome: what the webhook handler claims by default, what
 * `runOnce` is given for a reconciliation, and how the SQL ledger tells a run it keeps for good
 * (a payment's outcome) from one it keeps only as long as its record lasts (a `webhook:` key).
 *
 * @module
 */
import { PAYMENT_STATUSES } from '../schemas/statuses.js';

/**
 * The key the webhook handler claims for a payment outcome (its default `'payment'`
 * idempotency): one fulfilment per `payment_id` and terminal status.
 *
 * @example
 * ```ts
 * await runOnce(store, paymentKey(status.payment_id, status.status), () => fulfil(status), { payment: status });
 * ```
 */
export function paymentKey(paymentId: string, status: string): string {
  return `payment:${paymentId}:${status}`;
}

/**
 * @internal The payment outcome a key of exactly {@link paymentKey}'s shape names: `payment:`,
 * the payment's id, `:` and one of the spec's statuses (the last `:` splits them). `runOnce`
 * reads it when its `payment` option is left out, so a run under the handler's own key keeps
 * the payment as the handler does (on the SQL ledger, for good). Any other key names none.
 */
export function paymentOfKey(key: string): { readonly payment_id: string; readonly status: string } | undefined {
  const at = key.lastIndexOf(':');
  const status = key.slice(at + 1);
  return key.startsWith('payment:') && at > 8 && (PAYMENT_STATUSES as readonly string[]).includes(status)
    ? { payment_id: key.slice(8, at), status }
    : undefined;
}
