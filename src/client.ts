import { defaultTokenStore, TokenManager } from './core/tokens/manager.js';
import type { MyrGatewayOptions } from './client-options.js';
import { ConfigurationError } from './core/errors/base.js';
import { Observer } from './core/observe/observer.js';
import { isTracer } from './core/observe/trace.js';
import type { RateLimitInfo } from './core/pacing/rate-limit-headers.js';
import { resolveRetryOptions } from './core/call/retry-options.js';
import { wait as defaultSleep } from './core/wait.js';
import { readToken } from './core/tokens/answer.js';
import { defaultRateLimiter } from './core/pacing/memory-limiter.js';
import { Pacer } from './core/pacing/pacer.js';
import { redactSecret } from './core/redact.js';
import { tokenKey } from './core/tokens/shared.js';
import { tokenSeal } from './core/tokens/seal.js';
import { sha256Hex } from './core/hash.js';
import { noteClient } from './core/observe/client-census.js';
import { DEFAULTS, millisecondsSetting } from './core/settings.js';
import { Transport } from './core/call/transport.js';
import { type Connection, type RequiredSettings, requiredSettings } from './client-config.js';
import { Payments } from './resources/payments.js';
import { Withdrawals } from './resources/withdrawals.js';
import { VERSION } from './version.js';

/**
 * The transport of a client whose settings were missing at construction: each call reads them
 * again (a `.env` loaded after the module that built the client, a platform that sets
 * variables at run time, not at build time), connects once they are all there, and until then
 * fails with the {@link ConfigurationError} that names them, before anything is sent.
 */
function deferredTransport(connect: () => Transport): Pick<Transport, 'call' | 'outcomeOf' | 'rateLimit'> {
  let transport: Transport | undefined;
  return {
    // async: a throw of `connect` (settings still missing) becomes the call's rejection.
    async call(...args) {
      transport ??= connect();
      return transport.call(...args);
    },
    async outcomeOf(...args) {
      transport ??= connect();
      return transport.outcomeOf(...args);
    },
    get rateLimit() {
      return transport?.rateLimit;
    },
  };
}

function observeOptions(options: MyrGatewayOptions, now: () => number) {
  const { logger, logLevel, onRequest, onResponse, onRetry, tracer } = options;
  for (const level of ['debug', 'info', 'warn', 'error'] as const) {
    if (logger !== undefined && typeof logger?.[level] !== 'function') {
      throw new ConfigurationError(
        `logger must have debug, info, warn and error methods; ${level} is missing`,
        'logger',
      );
    }
  }
  if (logLevel !== undefined && !['debug', 'info', 'warn', 'error', 'off'].includes(logLevel)) {
    throw new ConfigurationError("logLevel must be 'debug', 'info', 'warn', 'error' or 'off'", 'logLevel');
  }
  for (const [name, hook] of Object.entries({ onRequest, onResponse, onRetry })) {
    if (hook !== undefined && typeof hook !== 'function')
      throw new ConfigurationError(`${name} must be a function`, name);
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
 * // Reads MYR_GATEWAY_BASE_URL, MYR_GATEWAY_MERCHANT_ID and MYR_GATEWAY_API_KEY; a missing one
 * // fails the first call with a ConfigurationError, never the construction (safe at module scope).
 * const gateway = new MyrGateway();
 * const payment = await gateway.payments.create({ ... });
 * ```
 */
export class MyrGateway {
  /** Deposit payments and status lookups. */
  declare readonly payments: Payments;
  /** Withdrawals (payouts). */
  declare readonly withdrawals: Withdrawals;
  readonly #transport: Pick<Transport, 'call' | 'outcomeOf' | 'rateLimit'>;
  #settings: RequiredSettings;

  constructor(options: MyrGatewayOptions = {}) {
    if (options === null || typeof options !== 'object') throw new ConfigurationError('options must be an object');
    const allowInsecureLoopback = options.allowInsecureLoopback === true;
    const settings = requiredSettings(options, allowInsecureLoopback);
    this.#settings = settings;
    for (const name of ['fetch', 'sleep', 'random', 'now'] as const) {
      // Checked here: a proxy URL given as `fetch` would otherwise fail every call as a connection error.
      if (options[name] != null && typeof options[name] !== 'function')
        throw new ConfigurationError(`${name} must be a function`, name);
    }
    const now = options.now ?? Date.now;
    const timeout = millisecondsSetting(options.timeout, DEFAULTS.timeout, 'timeout', 'client');
    const storeTimeout = millisecondsSetting(
      options.tokenStoreTimeout,
      DEFAULTS.tokenStoreTimeout,
      'tokenStoreTimeout',
      'client',
    );
    const totalTimeout = millisecondsSetting(options.totalTimeout, DEFAULTS.totalTimeout, 'totalTimeout', 'client');
    const refreshMarginMs = millisecondsSetting(
      options.tokenRefreshMarginMs,
      DEFAULTS.tokenRefreshMarginMs,
      'tokenRefreshMarginMs',
      'client',
      0,
    );
    const retry = resolveRetryOptions({
      ...options.retry,
      ...(options.maxRetries === undefined ? {} : { maxRetries: options.maxRetries }),
    });
    const observer = new Observer(observeOptions(options, now), VERSION);
    const warn = (message: string) => observer.log.write('warn', message);
    const limiter = options.rateLimiter === undefined ? defaultRateLimiter() : options.rateLimiter;
    if (limiter !== false && (typeof limiter?.acquire !== 'function' || typeof limiter.observe !== 'function')) {
      throw new ConfigurationError('rateLimiter must be a RateLimiter (acquire and observe) or false', 'rateLimiter');
    }
    const sleep = options.sleep ?? defaultSleep;
    const random = options.random ?? Math.random;

    const connect = ({ baseUrl, merchantId, apiKey }: Connection): Transport => {
      noteClient(baseUrl, merchantId, warn);
      const transport = new Transport({
        baseUrl,
        fetch: options.fetch,
        timeout,
        totalTimeout,
        retry,
        userAgent: `myr-gateway/${VERSION}`,
        now,
        random,
        sleep,
        redact: redactSecret(apiKey),
        observer,
        pacer:
          limiter === false
            ? undefined
            : new Pacer(limiter, () => sha256Hex(['myr-gateway pacing v1', baseUrl, merchantId]), warn, storeTimeout),
      });
      let key: Promise<string> | undefined;
      const tokens = new TokenManager({
        store: options.tokenStore ?? defaultTokenStore(),
        key: () => (key ??= tokenKey(baseUrl, merchantId, apiKey)),
        seal: () => tokenSeal(apiKey),
        now,
        refreshMarginMs,
        storeTimeoutMs: storeTimeout,
        storeRefreshTimeoutMs: storeTimeout + timeout,
        warn,
        fetchToken: async (signal, beforeAttempt) => {
          const { data } = await transport.call(
            {
              method: 'POST',
              path: 'auth/token',
              body: { merchant_id: merchantId, api_key: apiKey },
              authenticated: false,
              operation: 'token',
            },
            { signal },
            beforeAttempt,
          );
          return readToken(data, now());
        },
      });
      transport.useTokens(tokens);
      return transport;
    };
    this.#transport = settings.connection
      ? connect(settings.connection)
      : deferredTransport(() => {
          const later = requiredSettings(options, allowInsecureLoopback);
          if (!later.connection) throw later.missing;
          this.#settings = later;
          return connect(later.connection);
        });
    this.payments = new Payments(this.#transport, allowInsecureLoopback, { sleep, random, now });
    this.withdrawals = new Withdrawals(this.#transport);
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
    return { baseUrl: this.#settings.baseUrl, merchantId: this.#settings.merchantId };
  }

  /** @internal */
  [Symbol.for('nodejs.util.inspect.custom')](): string {
    return `MyrGateway ${JSON.stringify(this.toJSON())}`;
  }
}
