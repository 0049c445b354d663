/**
 * The client's defaults and the range of every numeric setting, in one place: the
 * constructor's options (a {@link ConfigurationError}) and the per-call options (an
 * {@link InvalidRequestError}, raised before anything is sent) are checked by the same rules.
 *
 * @module
 */
import { ConfigurationError, InvalidRequestError } from './errors/base.js';
import { isMilliseconds, MAX_TIMER_MS } from './milliseconds.js';

export { MAX_TIMER_MS };
/** Most retries a call may be given. */
export const MAX_RETRIES = 10;

/** The client's defaults (the spec's guidance where it gives one). */
export const DEFAULTS = {
  /** One attempt. */
  timeout: 30_000,
  /** A whole call, all attempts and waits included. */
  totalTimeout: 120_000,
  /** Retries after the first attempt (the spec: 3). */
  maxRetries: 3,
  /** One token store operation. */
  tokenStoreTimeout: 1000,
  /** Refresh a token this long before it expires (at most half its lifetime). */
  tokenRefreshMarginMs: 60_000,
} as const;

/** Where a setting came from: the constructor, or one call's options. */
export type SettingSource = 'client' | 'call';

function refuse(source: SettingSource, field: string, rule: string): Error {
  return source === 'client'
    ? new ConfigurationError(`${field} must be ${rule}`, field)
    : new InvalidRequestError(`VALIDATION_ERROR: ${field} must be ${rule}`, { code: 'VALIDATION_ERROR', field });
}

/** A millisecond setting: a whole number a timer can hold, from `min` (1 unless said), or the fallback. */
export function millisecondsSetting(
  value: number | undefined,
  fallback: number,
  field: string,
  source: SettingSource,
  min = 1,
): number {
  if (value === undefined) return fallback;
  // The SDK's one millisecond rule (core/milliseconds.ts); a call's option is refused as a request error.
  if (!isMilliseconds(value, min)) {
    throw refuse(source, field, `a whole number of milliseconds from ${min} to ${MAX_TIMER_MS}`);
  }
  return value;
}

/** A call's `signal`: an AbortSignal, or none (undefined or null); anything else is refused before a request is built. */
export function signalSetting(value: unknown): AbortSignal | undefined {
  if (value == null) return undefined;
  if (!(value instanceof AbortSignal)) throw refuse('call', 'signal', 'an AbortSignal');
  return value;
}

/** A retry count: a whole number from 0 to {@link MAX_RETRIES}, or the fallback. */
export function retriesSetting(
  value: number | undefined,
  fallback: number,
  field: string,
  source: SettingSource,
): number {
  if (value === undefined) return fallback;
  if (!Number.isInteger(value) || value < 0 || value > MAX_RETRIES)
    throw refuse(source, field, `a whole number from 0 to ${MAX_RETRIES}`);
  return value;
}
