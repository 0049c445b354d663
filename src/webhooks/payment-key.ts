/**
 * The idempotency key of a payment outcome: what the webhook handler claims by default, what
 * `runOnce` is given for a reconciliation, and how the SQL ledger tells a run it keeps for good
 * (a payment's outcome) from one it keeps only as long as its record lasts (a `webhook:` key).
 *
 * @module
 */

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
