/**
 * The one range rule of every millisecond option in the SDK (the client's timeouts, the webhook
 * handler's and `runOnce`'s claim times, the Redis stores' TTLs and timeouts): a whole number
 * from a minimum to at most what a Node timer can hold. A longer delay is not refused by
 * `setTimeout`: Node fires it after 1 ms, so a `handlerTimeoutMs: 3e9` would answer 503 to
 * every callback. The webhooks entry uses it too, so it imports nothing but the error base.
 *
 * @module
 */
import { ConfigurationError } from './errors/base.js';

/** Longest delay a timer can take (2^31 - 1 ms, about 24.8 days). */
export const MAX_TIMER_MS = 2_147_483_647;

/** Whether `value` is a whole number of milliseconds from `min` to `max` (at most {@link MAX_TIMER_MS}). */
export function isMilliseconds(value: unknown, min = 1, max = MAX_TIMER_MS): value is number {
  return typeof value === 'number' && Number.isInteger(value) && value >= min && value <= max;
}

/** `value` when it is {@link isMilliseconds}, else a {@link ConfigurationError} naming the option. */
export function milliseconds(value: unknown, name: string, min = 1, max = MAX_TIMER_MS): number {
  if (!isMilliseconds(value, min, max))
    throw new ConfigurationError(`${name} must be a whole number of milliseconds from ${min} to ${max}`, name);
  return value;
}
