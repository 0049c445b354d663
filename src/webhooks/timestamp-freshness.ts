/**
 * The staleness rule of the spec: a callback whose signed `timestamp` is more than the tolerance
 * (5 minutes unless the merchant sets `toleranceSeconds`) from the receiver's clock, in either
 * direction, is refused. A replayed callback is refused once it is stale; one from the future
 * (a sender's clock ahead, or a forged date) is refused the same way. The verifier applies it
 * after the HMAC matched, to a timestamp read by `timestamp-parse.ts`.
 *
 * @module
 */
import { fail } from './request-parts.js';

/** The spec's tolerance: 5 minutes either way. */
export const DEFAULT_TOLERANCE_SECONDS = 300;

/**
 * Refuses a callback signed at `timeMs` that is more than `toleranceMs` old at `nowMs`
 * (reason `stale`) or more than `toleranceMs` ahead of it (reason `future`); both bounds are
 * fresh. Throws a `WebhookVerificationError`; returns nothing when fresh.
 *
 * @example
 * ```ts
 * assertFresh(Date.parse('2026-01-01T00:00:00Z'), Date.parse('2026-01-01T00:05:00Z'), 300_000); // fresh
 * assertFresh(Date.parse('2026-01-01T00:00:00Z'), Date.parse('2026-01-01T00:05:00.001Z'), 300_000); // throws: stale
 * ```
 */
export function assertFresh(timeMs: number, nowMs: number, toleranceMs: number): void {
  if (nowMs - timeMs > toleranceMs) throw fail('stale', 'timestamp is older than the tolerance');
  if (timeMs - nowMs > toleranceMs) throw fail('future', 'timestamp is further in the future than the tolerance');
}
