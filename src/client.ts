import { defaultTokenStore, TokenManager } from './core/tokens/manager.js';
import type { MyrGatewayOptions } from './client-options.js';
import { ConfigurationError } from './core/errors/base.js';
import { Observer } from './core/observe/observer.js';
import { isTracer } from './core/observe/trace.js';
import type { RateLimitInfo } from './core/pacing/rate-limit-headers.js';
import { resolveRetryOptions, sleep as defaultSleep } from './core/retry.js';
import { readToken } from './core/tokens/answer.js';
import { defaultRateLimiter } from './core/pacing/memory-limiter.js';
import { Pacer } from './core/pacing/pacer.js';
import { redactSecret } from './core/redact.js';
import { tokenKey } from './core/tokens/shared.js';
import { tokenSeal } from './core/tokens/seal.js';
import { sha256Hex } from './core/hash.js';
import { noteClient } from './core/observe/client-census.js';
import { DEFAULTS, millisecondsSetting } from './core/settings.js';
import { Transport } from './core/transport.js';
import { LOOPBACK_HOST } from './core/urls.js';
import { Payments } from './resources/payments.js';
import { Withdrawals } from './resources/withdrawals.js';
import { VERSION } from './version.js';

function checkBaseUrl(baseUrl: unknown, allowInsecureLoopback: boolean): string {
  if (typeof baseUrl !== 'string' || baseUrl === '') throw new ConfigurationError('baseUrl is required', 'baseUrl');
  let url: URL;
  try {
    url = new URL(baseUrl);
  } catch {
    throw new ConfigurationError('baseUrl must be an absolute URL such as https://host/api/v1', 'baseUrl');
  }
  if (url.username || url.password) throw new ConfigurationError('baseUrl must not contain credentials', 'baseUrl');
  if (url.protocol === 'http:') {
    if (!LOOPBACK_HOST.test(url.hostname)) {
      throw new ConfigurationError(
        'baseUrl must use https:// (the service rejects plain HTTP and the api_key must not travel unencrypted)',
        'baseUrl',
      );
    }
    if (!allowInsecureLoopback) {
      throw new ConfigurationError(
        'baseUrl uses http:// on a loopback host; pass allowInsecureLoopback: true to allow it for a local mock',
        'baseUrl',
      );
    }
  } else if (url.protocol !== 'https:') {
    throw new ConfigurationError('baseUrl must use https://', 'baseUrl');
  }
  return url.href.endsWith('/') ? url.href : `${url.href}/`;
}

function requireString(value: unknown, field: string): string {
  if (typeof value !== 'string' || value.trim() === '') throw new ConfigurationError(`${field} is required`, field);
  return value;
}

function observeOptions(options: MyrGatewayOptions, now: () => number) {
  const { logger, logLevel, onRequest, onResponse, onRetry, tracer } = options;
  for (const level of ['debug', 'info', 'warn', 'error'] as const) {
    if (logger !== undefined && typeof logger?.[level] !== 'function') {
      throw new ConfigurationError(`logger must have debug, info, warn and error methods (such as console, pino or winston); ${level} is missing`, 'logger');
    }
  }
  if (logLevel !== undefined && !['debug', 'info', 'warn', 'error', 'off'].includes(logLevel)) {
    throw new ConfigurationError("logLevel must be 'debug', 'info', 'warn', 'error' or 'off'", 'logLevel');
  }
  for (const [name, hook] of Object.entries({ onRequest, onResponse, onRetry })) {
    if (hook !== undefined && typeof hook !== 'function') throw new ConfigurationError(`${name} must be a function`, name);
  }
  if (tracer !== undefined && tracer !== false && !isTracer(tracer)) {
    throw new ConfigurationError('tracer must be an OpenTelemetry Tracer (with startActiveSpan), or false', 'tracer');
  }
  return { logger, logLevel, onRequest, onResponse, onRetry, tracer, now };
}

/**
 * The client of the Payment Gateway Service.
 *
 * @example
 * ```ts
 * import { MyrGateway } from 'myr-gateway';
 *
 * const gateway = new MyrGateway({
 *   baseUrl: 'https://api.gateway.example/api/v1',
 *   merchantId: process.env.MYR_MERCHANT_ID!,
 *   apiKey: process.env.MYR_API_KEY!,
 * });
 * const payment = await gateway.payments.create({ ... });
 * ```
 */
export class MyrGateway {
  /** Deposit payments and status lookups. */
  readonly payments: Payments;
  /** Withdrawals (payouts). */
  readonly withdrawals: Withdrawals;
  readonly #transport: Transport;
  readonly #merchantId: string;
  readonly #baseUrl: string;

  constructor(options: MyrGatewayOptions) {
    if (options === null || typeof options !== 'object') throw new ConfigurationError('options are required');
    const baseUrl = checkBaseUrl(options.baseUrl, options.allowInsecureLoopback === true);
    const merchantId = requireString(options.merchantId, 'merchantId');
    const apiKey = requireString(options.apiKey, 'apiKey');
    const now = options.now ?? Date.now;
    this.#merchantId = merchantId;
    this.#baseUrl = baseUrl;
    const timeout = millisecondsSetting(options.timeout, DEFAULTS.timeout, 'timeout', 'client');
    const storeTimeout = millisecondsSetting(options.tokenStoreTimeout, DEFAULTS.tokenStoreTimeout, 'tokenStoreTimeout', 'client');
    const observer = new Observer(observeOptions(options, now), VERSION);
    const warn = (message: string) => observer.log.write('warn', message);
    noteClient(baseUrl, merchantId, warn);

    const redact = redactSecret(apiKey);
    const limiter = options.rateLimiter === undefined ? defaultRateLimiter() : options.rateLimiter;
    if (limiter !== false && (typeof limiter?.acquire !== 'function' || typeof limiter.observe !== 'function')) {
      throw new ConfigurationError('rateLimiter must be a RateLimiter (acquire and observe) or false', 'rateLimiter');
    }
    const transport = new Transport({
      baseUrl,
      fetch: options.fetch,
      timeout,
      totalTimeout: millisecondsSetting(options.totalTimeout, DEFAULTS.totalTimeout, 'totalTimeout', 'client'),
      retry: resolveRetryOptions({ ...options.retry, ...(options.maxRetries === undefined ? {} : { maxRetries: options.maxRetries }) }),
      userAgent: `myr-gateway/${VERSION}`,
      now,
      random: options.random ?? Math.random,
      sleep: options.sleep ?? defaultSleep,
      redact,
      observer,
      pacer: limiter === false ? undefined : new Pacer(limiter, () => sha256Hex(['myr-gateway pacing v1', baseUrl, merchantId]), now, warn),
    });
    let key: Promise<string> | undefined;
    const tokens = new TokenManager({
      store: options.tokenStore ?? defaultTokenStore(),
      key: () => (key ??= tokenKey(baseUrl, merchantId, apiKey)),
      seal: () => tokenSeal(apiKey),
      now,
      refreshMarginMs: millisecondsSetting(options.tokenRefreshMarginMs, DEFAULTS.tokenRefreshMarginMs, 'tokenRefreshMarginMs', 'client', 0),
      storeTimeoutMs: storeTimeout,
      storeRefreshTimeoutMs: storeTimeout + timeout,
      warn,
      fetchToken: async (signal, beforeAttempt) => {
        const body = await transport.call(
          {
            method: 'POST',
            path: 'auth/token',
            body: { merchant_id: merchantId, api_key: apiKey },
            authenticated: false,
            operation: 'token',
          },
          { signal },
          undefined,
          beforeAttempt,
        );
        return readToken(body, now());
      },
    });
    transport.useTokens(tokens);
    this.#transport = transport;
    this.payments = new Payments(transport, options.allowInsecureLoopback === true, {
      sleep: options.sleep ?? defaultSleep,
      random: options.random ?? Math.random,
    });
    this.withdrawals = new Withdrawals(transport);
  }

  /**
   * The `X-RateLimit-*` values of the last response that carried them, or undefined
   * before the first one.
   *
   * @example
   * ```ts
   * if ((gateway.rateLimit?.remaining ?? Infinity) < 5) slowDown();
   * ```
   */
  get rateLimit(): RateLimitInfo | undefined {
    return this.#transport.rateLimit;
  }

  /** A secret-free description for logs. */
  toJSON(): Record<string, unknown> {
    return { baseUrl: this.#baseUrl, merchantId: this.#merchantId };
  }

  /** @internal */
  [Symbol.for('nodejs.util.inspect.custom')](): string {
    return `MyrGateway { baseUrl: '${this.#baseUrl}', merchantId: '${this.#merchantId}' }`;
  }
}
