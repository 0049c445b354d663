/**
 * How long a claim lives, set against the gateway's delivery schedule: one pure policy, so
 * the trade between "a crashed handler's retry runs elsewhere" and "a live slow handler
 * keeps its claim" is decided in one place and shown by a table test
 * (test/unit/webhooks/delivery-policy.test.ts).
 *
 * The gateway delivers a callback up to 3 times: immediately, about 1 s later and about 5 s
 * after that (spec, Events > Delivery). A process killed mid-handler stops renewing its
 * claim; the claim then lasts at most `inFlightTtlMs` from the crash. The gateway sees the
 * dropped connection at the crash and retries 1 s and 6 s later, so a TTL under the last
 * retry's delay (less the slack "about" allows) lets that retry run the handler on another
 * process. A live handler renews every third of the TTL, so it keeps the claim through two
 * missed renewals (a stalled event loop, a slow Redis round trip).
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

/** How early an "about" delay may come: a retry is assumed to arrive after at least 80% of it. */
export const RETRY_DELAY_SLACK = 0.2;

/**
 * The handler's default `inFlightTtlMs`: the claim of a crashed handler ends before the
 * gateway's third delivery (about 6 s after the crash, 4.8 s at the earliest), and a live
 * handler renews it every 1.33 s.
 *
 * @example
 * ```ts
 * runOnce(store, key, fulfil, { inFlightTtlMs: DEFAULT_IN_FLIGHT_TTL_MS });
 * ```
 */
export const DEFAULT_IN_FLIGHT_TTL_MS = 4000;

/**
 * Which delivery (2 or 3) finds the claim of a handler that crashed during the first one
 * free, for a claim TTL of `inFlightTtlMs`; `undefined` when every retry still meets the
 * dead claim (409) and the gateway gives up.
 *
 * @example
 * ```ts
 * deliveryAfterCrash(4_000); // 3: the retry about 6 s after the crash runs the handler
 * deliveryAfterCrash(60_000); // undefined: all retries answered 409
 * ```
 */
export function deliveryAfterCrash(inFlightTtlMs: number, retryDelaysMs: readonly number[] = GATEWAY_RETRY_DELAYS_MS): number | undefined {
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
 * renewEveryMs(4_000); // 1333
 * ```
 */
export function renewEveryMs(inFlightTtlMs: number): number {
  return Math.max(1, Math.floor(inFlightTtlMs / 3));
}
