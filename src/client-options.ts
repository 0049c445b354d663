/**
 * The options of {@link MyrGateway}, each with its default and an example. The class that
 * reads them is in `client.ts`.
 *
 * @module
 */
import type { RequestEvent, ResponseEvent, RetryEvent } from './core/observe/events.js';
import type { Logger, LogLevel } from './core/observe/log.js';
import type { RateLimiter } from './core/pacing/limiter-contract.js';
import type { RetryOptions } from './core/call/retry-options.js';
import type { TokenStore } from './core/tokens/store.js';
import type { TracerLike } from './core/observe/trace.js';

/**
 * Options of {@link MyrGateway}. All optional: `new MyrGateway()` reads `MYR_GATEWAY_BASE_URL`,
 * `MYR_GATEWAY_MERCHANT_ID` and `MYR_GATEWAY_API_KEY` from the environment.
 */
export interface MyrGatewayOptions {
  /**
   * The service base address, including `/api/v1`. Must be `https://`, without a query or a
   * fragment. When left out, `MYR_GATEWAY_BASE_URL` is read; when that is unset too, every call
   * fails with a `ConfigurationError` (construction does not, so a module-scope client
   * never breaks a build). A value that is present and wrong fails the construction.
   * @default process.env.MYR_GATEWAY_BASE_URL
   * @example 'https://api.gateway.example/api/v1'
   */
  baseUrl?: string | undefined;
  /**
   * Your `merchant_id`, issued out of band. When left out, `MYR_GATEWAY_MERCHANT_ID` is read;
   * missing in both, every call fails with a `ConfigurationError`.
   * @default process.env.MYR_GATEWAY_MERCHANT_ID
   * @example 'M_ACME_01'
   */
  merchantId?: string | undefined;
  /**
   * Your `api_key`, issued out of band. Secret: keep it on the backend. The SDK never
   * puts it in errors, logs, `util.inspect` or `JSON.stringify` output. When left out,
   * `MYR_GATEWAY_API_KEY` is read; missing in both, every call fails with a
   * `ConfigurationError`.
   * @default process.env.MYR_GATEWAY_API_KEY
   * @example process.env.MY_SECRET_MANAGER_KEY
   */
  apiKey?: string | undefined;
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
   * Milliseconds one call may wait on the `tokenStore` in all (its get, refresh lock, set and
   * delete share them). A slower or failing store is bypassed for the token held in this
   * process, with one warning; it never fails a call.
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
   * Called before every attempt is sent (token requests included). It may be async: a
   * returned promise is not awaited, and what it throws or rejects with is logged, never
   * changes the call.
   * @example
   * ```ts
   * new MyrGateway({ ...config, onRequest: (e) => metrics.increment('gateway.requests', { path: e.path }) });
   * ```
   */
  onRequest?: (event: RequestEvent) => unknown;
  /**
   * Called after every attempt, with its status (undefined when no answer came), duration,
   * correlation id, rate-limit headers and error code.
   * @example
   * ```ts
   * new MyrGateway({ ...config, onResponse: (e) => histogram.record(e.durationMs, { status: e.status }) });
   * ```
   */
  onResponse?: (event: ResponseEvent) => unknown;
  /**
   * Called when a failed attempt will be sent again, with the wait before it.
   * @example
   * ```ts
   * new MyrGateway({ ...config, onRetry: (e) => log.warn(`retry ${e.path} after ${e.errorCode} in ${e.delayMs} ms`) });
   * ```
   */
  onRetry?: (event: RetryEvent) => unknown;
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
