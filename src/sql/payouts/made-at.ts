/**
 * Which ISO 8601 forms the payouts' day rule (assumption A29) reads as the time a withdrawal was
 * made or completed: the extended form `parseTimestamp` reads, and two more ISO 8601 allows and a
 * service may send: a time without seconds (`2026-11-27T21:54Z`) and the basic form
 * (`20261127T215430Z`). Anything else is NaN: a time that cannot be read proves nothing (no
 * refusal).
 *
 * @module
 */
import { parseTimestamp } from '../../webhooks/timestamp-parse.js';

const BASIC = /^(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})?(\.\d{1,9})?(Z|[+-]\d{2}(?::?\d{2})?)?$/i;
const NO_SECONDS = /^(\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2})(Z|z|[+-]\d{2}(?::?\d{2})?)?$/;

/**
 * `text` as ms since the epoch (no zone: UTC, as the spec's times are), or NaN.
 *
 * @example
 * ```ts
 * madeAt('2026-11-27T21:54:30Z'); // Date.UTC(2026, 10, 27, 21, 54, 30)
 * madeAt('2026-11-27T21:54Z'); // Date.UTC(2026, 10, 27, 21, 54)
 * madeAt('20261127T215430+0800'); // Date.UTC(2026, 10, 27, 13, 54, 30)
 * madeAt('2026-11-27'); // NaN: a date alone
 * ```
 */
export function madeAt(text: string | null | undefined): number {
  if (typeof text !== 'string' || text.length > 40) return Number.NaN;
  const basic = BASIC.exec(text);
  if (basic !== null) {
    const [, year, month, day, hour, minute, second = '00', fraction = '', zone = ''] = basic;
    return parseTimestamp(`${year}-${month}-${day}T${hour}:${minute}:${second}${fraction}${zone}`);
  }
  const short = NO_SECONDS.exec(text);
  if (short !== null) return parseTimestamp(`${short[1] ?? ''}:00${short[2] ?? ''}`);
  return parseTimestamp(text);
}
