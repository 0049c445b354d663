import { defaultTokenStore, TokenManager } from './core/auth.js';
import type { TokenStore } from './core/token-store.js';
import { ConfigurationError } from './core/errors.js';
import type { Logger, LogLevel } from './core/log.js';
import { Observer } from './core/observe.js';
import type { RequestEvent, ResponseEvent, RetryEvent } from './core/events.js';
import { isTracer, type TracerLike } from './core/trace.js';
import type { RateLimitInfo } from './core/rate-limit.js';
import { resolveRetryOptions, type RetryOptions, sleep as defaultSleep } from './core/retry.js';
import { readToken } from './core/token-answer.js';
import type { RateLimiter } from './core/pacing.js';
import { defaultRateLimiter, Pacer } from './core/pacing-memory.js';
import { noteClient, sha256Hex, tokenKey } from './core/token-shared.js';
import { DEFAULTS, millisecondsSetting } from './core/settings.js';
import { Transport } from './core/transport.js';
import { LOOPBACK_HOST } from './core/validate.js';
import { Payments } from './resources/payments.js';
import { Withdrawals } from './resources/withdrawals.js';
import { VERSION } from './version.js';

/** Options of {@link MyrGateway}. */
export interface MyrGatewayOptions {
  /**
   * The service base address, including `/api/v1`. Must be `https://`.
   * @example 'https://api.gateway.example/api/v1'
   */
  baseUrl: string;
  /** Your `merchant_id`, issued out of band. */
  merchantId: string;
  /**
   * Your `api_key`, issued out of band. Secret: keep it on the backend. The SDK never
   * puts it in errors, logs, `util.inspect` or `JSON.stringify` output.
   */
  apiKey: string;
  /**
   * Accept `http://` URLs whose host is a loopback address (127.0.0.0/8, ::1, localhost), for
   * local development against `myr-gateway/testing` or `npx myr-gateway sandbox`: the base URL,
   * a payment's `callback_url` and `redirect_url` (your local webhook server and shop), and the
   * customer URLs the service answers with. Any other `http://` URL is refused regardless.
   * @default false
   * @example
   * ```ts
   * new MyrGateway({ baseUrl: 'http://127.0.0.1:4010/api/v1', merchantId, apiKey, allowInsecureLoopback: true });
   * ```
   */
  allowInsecureLoopback?: boolean;
  /**
   * A fetch implementation to use instead of the global one (instrumentation, proxies,
   * custom TLS). Looked up per request.
   * @default globalThis.fetch
   */
  fetch?: typeof globalThis.fetch;
  /**
   * Milliseconds one attempt may take.
   * @default 30000
   */
  timeout?: number;
  /**
   * Milliseconds a whole call may take, all retries and waits included.
   * @default 120000
   */
  totalTimeout?: number;
  /**
   * Retries after the first attempt for retryable failures.
   * @default 3
   */
  maxRetries?: number;
  /**
   * Backoff tuning; defaults follow the spec (1 s, 2 s, 4 s plus up to 1 s jitter).
   * @example { baseDelayMs: 500, jitterMs: 250 }
   */
  retry?: Omit<RetryOptions, 'maxRetries'>;
  /**
   * Where access tokens are cached. By default every client in this process with the same
   * base URL, merchant id and api key shares one token, one refresh and one limit of 5 token
   * requests a minute, so creating a client per request costs no extra token. Pass a shared
   * store (for example Redis, ideally with `refresh`) to do the same across processes.
   * @default a process-wide MemoryTokenStore
   * @example new MemoryTokenStore() // a cache of this client's own
   */
  tokenStore?: TokenStore;
  /**
   * Refresh a cached token this many milliseconds before it expires; capped at half the
   * token's lifetime, so a short-lived token is still used.
   * @default 60000
   */
  tokenRefreshMarginMs?: number;
  /**
   * Milliseconds one `tokenStore` get, set or delete may take. A slower or failing store is
   * bypassed for the token held in this process, with one warning; it never fails a call.
   * @default 1000
   * @example 250
   */
  tokenStoreTimeout?: number;
  /**
   * Where the SDK logs: `console`, a pino or winston logger, or any object with `debug`, `info`,
   * `warn` and `error`. Lines carry the method, path, attempt, status, duration, correlation id
   * and rate-limit headers; never a secret or a full account number. Called as
   * `logger.info(message, fields)`, or `logger.info(fields, message)` for pino.
   * @default console, for warnings only
   * @example
   * ```ts
   * new MyrGateway({ ...config, logger: pino(), logLevel: 'info' });
   * ```
   */
  logger?: Logger;
  /**
   * The lowest level logged: `debug` (every attempt), `info` (every call and retry), `warn`
   * (token store trouble, clients created per request), `error`, or `off`.
   * @default 'warn'
   * @example
   * ```ts
   * new MyrGateway({ ...config, logger: console, logLevel: 'debug' });
   * ```
   */
  logLevel?: LogLevel | 'off';
  /**
   * Called before every attempt is sent (token requests included). Must not throw; a
   * returned promise is not awaited.
   * @example
   * ```ts
   * new MyrGateway({ ...config, onRequest: (e) => metrics.increment('gateway.requests', { path: e.path }) });
   * ```
   */
  onRequest?: (event: RequestEvent) => void;
  /**
   * Called after every attempt, with its status (undefined when no answer came), duration,
   * correlation id, rate-limit headers and error code.
   * @example
   * ```ts
   * new MyrGateway({ ...config, onResponse: (e) => histogram.record(e.durationMs, { status: e.status }) });
   * ```
   */
  onResponse?: (event: ResponseEvent) => void;
  /**
   * Called when a failed attempt will be sent again, with the wait before it.
   * @example
   * ```ts
   * new MyrGateway({ ...config, onRetry: (e) => log.warn(`retry ${e.path} after ${e.errorCode} in ${e.delayMs} ms`) });
   * ```
   */
  onRetry?: (event: RetryEvent) => void;
  /**
   * An OpenTelemetry tracer: every call becomes a client span (method, path template,
   * attempts, status, correlation id, rate-limit headers, `myr.reference_id`). By default the
   * tracer of the globally registered OpenTelemetry provider is used when there is one;
   * `false` turns spans off.
   * @default the global provider's tracer, if `@opentelemetry/api` registered one
   * @example
   * ```ts
   * import { trace } from '@opentelemetry/api';
   * new MyrGateway({ ...config, tracer: trace.getTracer('checkout') });
   * ```
   */
  tracer?: TracerLike | false;
  /**
   * Pacing to the service's rate limits (5 token, 100 payment, 50 withdrawal and 100 other
   * requests a minute, or whatever its `X-RateLimit-*` headers say). A call waits for a free
   * slot before it sends anything (that wait is not a retry), bounded by its `signal` and
   * `totalTimeout`; no slot in time ends it with a {@link RateLimitError} saying so. By default
   * every client of the same merchant and base URL in this process shares one budget. Pass
   * `new RedisRateLimiter({ client })` (`myr-gateway/redis`) to share it across a fleet, your
   * own {@link RateLimiter}, or `false` to turn pacing off (429s are then only retried).
   * @default a process-wide MemoryRateLimiter
   * @example
   * ```ts
   * import { RedisRateLimiter } from 'myr-gateway/redis';
   * new MyrGateway({ baseUrl, merchantId, apiKey, rateLimiter: new RedisRateLimiter({ client: redis }) });
   * ```
   */
  rateLimiter?: RateLimiter | false;
  /**
   * Clock in epoch milliseconds (tests).
   * @default Date.now
   */
  now?: () => number;
  /**
   * Waits between retries (tests can make this instant). Must reject when `signal` aborts.
   * @default a setTimeout-based sleep
   */
  sleep?: (ms: number, signal?: AbortSignal) => Promise<void>;
  /**
   * Source of jitter in [0, 1) (tests).
   * @default Math.random
   */
  random?: () => number;
}

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

    // The transport also redacts the access token of each attempt (wherever it came from).
    const redact = (text: string): string => text.split(apiKey).join('[redacted]');
    const limiter = options.rateLimiter === undefined ? defaultRateLimiter(now) : options.rateLimiter;
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
      pacer: limiter === false ? undefined : new Pacer(limiter, () => sha256Hex(['myr-gateway pacing v1', baseUrl, merchantId]), now),
    });
    let key: Promise<string> | undefined;
    const tokens = new TokenManager({
      store: options.tokenStore ?? defaultTokenStore(),
      key: () => (key ??= tokenKey(baseUrl, merchantId, apiKey)),
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
