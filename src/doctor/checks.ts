/**
 * The rules of `npx myr-gateway doctor` that need no network: reading the configuration from
 * the environment, the callback URL's scheme and the clock skew verdict. Pure functions, so
 * each rule has a table test (test/unit/doctor/checks.test.ts); run.ts asks the service.
 *
 * @module
 */
import { PUBLISHED_LIMITS } from '../core/pacing/limiter-contract.js';

import { environmentVariable, requiredSettings, type RequiredSettings } from '../client-config.js';
import { ConfigurationError } from '../core/errors/base.js';

/** The environment variables the doctor reads; the same names a merchant's backend uses. */
export const ENV = Object.freeze({
  baseUrl: 'MYR_GATEWAY_BASE_URL',
  merchantId: 'MYR_GATEWAY_MERCHANT_ID',
  apiKey: 'MYR_GATEWAY_API_KEY',
  callbackUrl: 'MYR_GATEWAY_CALLBACK_URL',
});

/**
 * Largest clock difference with the service that passes without a warning. Callbacks older
 * than 5 minutes are refused by the webhook verifier, so a skew of minutes already eats into
 * that window; 60 s leaves room for the service's own delivery delays.
 */
export const MAX_CLOCK_SKEW_MS = 60_000;

/** Names of the checks, in the order they run and print. */
export type CheckName =
  'configuration' | 'token' | 'status lookup' | 'clock' | 'rate limits' | 'callback URL' | 'ledger table';

/**
 * The verdict of one check. `fail` makes the command exit non-zero; `warn` is printed but
 * passes; `skip` means the check could not run because an earlier one failed (or, for the
 * callback URL, because none is configured).
 */
export type CheckOutcome = 'ok' | 'warn' | 'fail' | 'skip';

/** One printed line of the doctor. `detail` never holds a secret. */
export interface CheckResult {
  name: CheckName;
  outcome: CheckOutcome;
  detail: string;
}

/** What the doctor needs from the environment. */
export interface DoctorConfiguration {
  baseUrl: string;
  merchantId: string;
  apiKey: string;
  callbackUrl: string | undefined;
}

/** Environment variables as `process.env` holds them. */
export type Environment = Readonly<Record<string, string | undefined>>;

/**
 * Reads the configuration through the client's own code (`requiredSettings`), so the doctor
 * and the client agree on every value: it says which variables are missing (an empty or blank
 * value counts as missing), or why one is refused (`invalid`: a base URL the client refuses, a
 * merchant id or api key with whitespace around it). The api key's value is never part of the
 * answer, nor of an error.
 *
 * @example
 * ```ts
 * const read = readConfiguration(process.env);
 * if ('missing' in read) console.error(`set ${read.missing.join(', ')}`);
 * ```
 */
export function readConfiguration(
  env: Environment,
): { configuration: DoctorConfiguration } | { missing: string[] } | { invalid: ConfigurationError } {
  let settings: RequiredSettings;
  try {
    // The sandbox is plain http on 127.0.0.1; any other http:// base URL is still refused.
    settings = requiredSettings({}, true, (name) => env[name]);
  } catch (error) {
    if (error instanceof ConfigurationError) return { invalid: error };
    throw error;
  }
  if (!settings.connection) return { missing: settings.absent.map(environmentVariable) };
  const callbackUrl = env[ENV.callbackUrl]?.trim();
  return { configuration: { ...settings.connection, callbackUrl: callbackUrl === '' ? undefined : callbackUrl } };
}

function isLoopbackHost(hostname: string): boolean {
  const host = hostname.replace(/^\[|\]$/g, '').toLowerCase();
  return host === 'localhost' || host === '::1' || /^127(\.\d{1,3}){3}$/.test(host);
}

/**
 * The callback URL rule: the service refuses an `http://` `callback_url` in production, so it
 * must be `https://`. An `http://` loopback URL is a warning, not a failure: the sandbox and
 * the mock accept one for a webhook server on the developer's machine.
 *
 * @example
 * ```ts
 * checkCallbackUrl('https://shop.example/webhooks/myr'); // { outcome: 'ok', … }
 * checkCallbackUrl('http://shop.example/webhooks/myr');  // { outcome: 'fail', … }
 * ```
 */
export function checkCallbackUrl(callbackUrl: string | undefined): CheckResult {
  const name = 'callback URL';
  if (callbackUrl === undefined) return { name, outcome: 'skip', detail: `${ENV.callbackUrl} not set` };
  let url: URL;
  try {
    url = new URL(callbackUrl);
  } catch {
    return { name, outcome: 'fail', detail: `${ENV.callbackUrl} is not an absolute URL` };
  }
  // Printed without user info or query, which may carry a secret of the merchant's own.
  const shown = `${url.protocol}//${url.host}${url.pathname}`;
  if (url.protocol === 'https:') return { name, outcome: 'ok', detail: `${shown} is https` };
  if (url.protocol === 'http:' && isLoopbackHost(url.hostname)) {
    return { name, outcome: 'warn', detail: `${shown} is http on loopback: only the sandbox and the mock accept it` };
  }
  return { name, outcome: 'fail', detail: `${shown} must be https:// (the service refuses any other callback_url)` };
}

/**
 * The clock rule: compares the service's `Date` header with the local clock at the moment the
 * answer arrived. `Date` has a resolution of one second, so the skew is known to about 1 s.
 *
 * @example
 * ```ts
 * checkClockSkew('Tue, 24 Nov 2026 03:00:00 GMT', Date.parse('2026-11-24T03:02:00Z')); // warn: 120 s ahead
 * ```
 */
export function checkClockSkew(serviceDate: string | undefined, localMs: number): CheckResult {
  const name = 'clock';
  const serviceMs = serviceDate === undefined ? Number.NaN : Date.parse(serviceDate);
  if (!Number.isFinite(serviceMs)) {
    return { name, outcome: 'warn', detail: "no usable Date header in the service's answers: cannot compare clocks" };
  }
  const skewMs = localMs - serviceMs;
  const seconds = Math.round(Math.abs(skewMs) / 1000);
  const direction = skewMs > 0 ? 'ahead of' : 'behind';
  if (Math.abs(skewMs) <= MAX_CLOCK_SKEW_MS) {
    return { name, outcome: 'ok', detail: `local clock within ${Math.max(1, seconds)} s of the service's` };
  }
  return {
    name,
    outcome: 'warn',
    detail:
      `local clock is ${seconds} s ${direction} the service's (more than ${MAX_CLOCK_SKEW_MS / 1000} s): ` +
      'callbacks are accepted for 5 minutes only, so fix the clock (NTP)',
  };
}

/**
 * What the token check adds to a 429: the limit it ran into and when to try again. The
 * doctor asks for a fresh token on every run, so a few runs in a minute reach the limit.
 *
 * @example
 * ```ts
 * tokenRateLimitHint(42);        // '; the service allows 5 token requests a minute: retry in 42 s'
 * tokenRateLimitHint(undefined); // '; the service allows 5 token requests a minute: retry in a minute'
 * ```
 */
export function tokenRateLimitHint(retryAfterSeconds: number | undefined): string {
  const when =
    retryAfterSeconds === undefined || !Number.isFinite(retryAfterSeconds) || retryAfterSeconds < 0
      ? 'in a minute'
      : `in ${Math.max(1, Math.ceil(retryAfterSeconds))} s`;
  return `; the service allows ${PUBLISHED_LIMITS.token} token requests a minute: retry ${when}`;
}

/** The first failing check, or undefined when none failed. */
export function firstFailure(results: readonly CheckResult[]): CheckResult | undefined {
  return results.find((r) => r.outcome === 'fail');
}
