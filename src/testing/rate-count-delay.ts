/**
 * When the mock counts a request against its rate limit: on arrival, or after the delay of
 * `rateLimitCountDelay` (a queue in front of the service's counter).
 *
 * @module
 */
import type { MockGatewayOptions } from './types/options.js';

const MAX_DELAY_MS = 60_000;

/**
 * The delay before one request is counted, drawn anew per request; undefined when requests are
 * counted on arrival. Throws a `TypeError` naming the field for a value out of range.
 *
 * @example
 * ```ts
 * const next = countDelayOf({ latencyMs: 200, jitterMs: 800, random: () => 0.5 });
 * next?.(); // 600
 * ```
 */
export function countDelayOf(option: MockGatewayOptions['rateLimitCountDelay']): (() => number) | undefined {
  if (option === undefined) return undefined;
  const { latencyMs, jitterMs = 0, random = Math.random } = option;
  for (const [name, value] of [
    ['latencyMs', latencyMs],
    ['jitterMs', jitterMs],
  ] as const) {
    if (!Number.isInteger(value) || value < 0 || value > MAX_DELAY_MS) {
      throw new TypeError(
        `rateLimitCountDelay.${name} must be a whole number of milliseconds from 0 to ${MAX_DELAY_MS}`,
      );
    }
  }
  if (latencyMs === 0 && jitterMs === 0) return undefined;
  return () => latencyMs + Math.round(jitterMs * Math.min(1, Math.max(0, random())));
}
