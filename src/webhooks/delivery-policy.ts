/**
 * How long a claim lives, set against the gateway's delivery schedule: one pure policy, so
 * the trade between "a crashed handler's retry runs elsewhere" and "a live slow handler
 * keeps its claim" is decided in one place and shown by a table test
 * (test/unit/webhooks/delivery-policy.test.ts).
 *
 * The gateway delivers a callback up to 3 times: immediately, about 1 s later and about 5 s
 * after that (spec, Events > Delivery). A process killed mid-handler stops renewing its
 * claim; the claim then lasts at most `inFlightTtlMs` from the crash. A live handler renews
 * every third of the TTL, so it keeps the claim through two missed renewals (a stalled event
 * loop, a paused or failing-over Redis). A lease cannot tell a stall from a crash: a TTL short
 * enough for the gateway's last retry to run a crashed handler elsewhere (under 4.8 s) also
 * hands a live handler's callback to that retry when it stalls longer, and a second fulfilment
 * is worse than a late one. So the default keeps a live claim through stalls of about 30 s,
 * and a crashed handler's callback is recovered by the reconciliation job
 * (examples/reconcile.ts) or, inside the delivery window, by a transactional store (the SQL
 * ledger), whose database frees a dead connection's claim at once.
 *
 * @module
 */

/**
 * Delays of the gateway's retries after the first, immediate delivery (spec: about 1 s, about 5 s).
 *
 * @example
 * ```ts
 * deliveryAfterCrash(inFlightTtlMs, GATEWAY_RETRY_DELAYS_MS);
 * ```
 */
export const GATEWAY_RETRY_DELAYS_MS: readonly number[] = [1000, 5000];

/**
 * How long the sandbox and `myr-gateway/testing` wait for the merchant's answer to one delivery
 * before counting the attempt failed (a timeout, then the next attempt). The spec states none
 * for the gateway; this is the one a merchant's dashboard shows.
 */
export const DELIVERY_ATTEMPT_TIMEOUT_MS = 10_000;

/**
 * The handler's default `handlerTimeoutMs` (8 s): the answer leaves before the delivery attempt
 * times out (10 s), with 2 s for verification, the body and the network. A callback the handler
 * processed is then answered 200 within its attempt; one it did not finish is answered 503
 * within it, and with the SQL ledger rolled back (nothing committed, the retry runs it), never
 * shown as failed while its run commits later. Past the default, the attempt is the gateway's to
 * count as failed while a lease store's handler goes on (its retry finds it in flight: 409).
 *
 * @example
 * ```ts
 * createWebhookHandler({ verifier, onEvent, handlerTimeoutMs: DEFAULT_HANDLER_TIMEOUT_MS });
 * ```
 */
export const DEFAULT_HANDLER_TIMEOUT_MS = 8_000;

/** How early an "about" delay may come: a retry is assumed to arrive after at least 80% of it. */
export const RETRY_DELAY_SLACK = 0.2;

/**
 * The handler's and `runOnce`'s default `inFlightTtlMs` (30 s): a live handler renews its
 * claim every 10 s and keeps it through a stall (a blocked event loop, a paused Redis, a
 * failover) of up to about 30 s, so no retry runs it a second time. A handler that crashed
 * keeps its callback blocked for as long: every delivery of the gateway meets the dead claim
 * (409), and the reconciliation job fulfils it later. `inFlightTtlMs: 4_000` (under 4.8 s)
 * lets the gateway's third delivery run a crashed handler elsewhere, at the price of a second
 * run when a live one stalls for more than 4 s.
 *
 * @example
 * ```ts
 * runOnce(store, key, fulfil, { inFlightTtlMs: DEFAULT_IN_FLIGHT_TTL_MS });
 * ```
 */
export const DEFAULT_IN_FLIGHT_TTL_MS = 30_000;

/**
 * Which delivery (2 or 3) finds the claim of a handler that crashed during the first one
 * free, for a claim TTL of `inFlightTtlMs`; `undefined` when every retry still meets the
 * dead claim (409) and the gateway gives up.
 *
 * @example
 * ```ts
 * deliveryAfterCrash(4_000); // 3: the retry about 6 s after the crash runs the handler
 * deliveryAfterCrash(30_000); // undefined: all retries answered 409 (the default: reconcile)
 * ```
 */
export function deliveryAfterCrash(
  inFlightTtlMs: number,
  retryDelaysMs: readonly number[] = GATEWAY_RETRY_DELAYS_MS,
): number | undefined {
  let sinceCrash = 0;
  for (const [index, delay] of retryDelaysMs.entries()) {
    sinceCrash += delay;
    if (sinceCrash * (1 - RETRY_DELAY_SLACK) > inFlightTtlMs) return index + 2;
  }
  return undefined;
}

/**
 * How often a running handler renews its claim: every third of the TTL, so two renewals in
 * a row may fail or stall before the claim ends.
 *
 * @example
 * ```ts
 * renewEveryMs(30_000); // 10000
 * ```
 */
export function renewEveryMs(inFlightTtlMs: number): number {
  return Math.max(1, Math.floor(inFlightTtlMs / 3));
}
