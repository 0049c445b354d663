/**
 * What a client tells about its calls: log lines, request hooks, OpenTelemetry spans and the
 * response metadata on results. Everything here is built from a fixed list of fields (method,
 * path, attempt, status, duration, correlation id, rate-limit headers, reference id, error
 * code): never a header, a body or an error message, so no api key, token or account number
 * can reach a log line, a hook or a span. The logger wrapper is in `log.ts`; the hook event
 * and `lastResponse` types are in `events.ts`.
 *
 * @module
 */
import { correlationIdFrom } from '../errors/from-response.js';
import { MyrGatewayError } from '../errors/base.js';
import type { RequestEvent, ResponseEvent, ResponseInfo, RetryEvent } from './events.js';
import { Log, type Logger, type LogLevel } from './log.js';
import type { RateLimitInfo } from '../pacing/rate-limit-headers.js';
import {
  runTraced,
  setAttributes,
  SPAN_KIND_CLIENT,
  SPAN_STATUS_ERROR,
  type SpanLike,
  type TracerLike,
} from './trace.js';

/** Observability settings of a client (resolved by the client from its options). */
export interface ObserveOptions {
  logger?: Logger | undefined;
  logLevel?: LogLevel | 'off' | undefined;
  onRequest?: ((event: RequestEvent) => unknown) | undefined;
  onResponse?: ((event: ResponseEvent) => unknown) | undefined;
  onRetry?: ((event: RetryEvent) => unknown) | undefined;
  /** A tracer, `false` for none, undefined to use the global OpenTelemetry tracer when one is registered. */
  tracer?: TracerLike | false | undefined;
  now: () => number;
}

/** `payment/status/ORDER1` → `/payment/status/{identifier}`: a span name of bounded cardinality. */
function template(path: string): string {
  return `/${path.replace(/^(payment\/status\/).*$/, '$1{identifier}')}`;
}

/** Calls a hook without letting it throw into, or reject beside, the call. */
function callHook<E>(hook: ((event: E) => unknown) | undefined, event: E, log: Log, name: string): void {
  if (!hook) return;
  const warn = () => log.write('warn', `the ${name} hook threw; ignoring it`);
  try {
    const result = hook(event);
    // A hook may return anything; only a thenable is waited on (for its rejection).
    if (typeof (result as PromiseLike<unknown> | undefined)?.then === 'function')
      (result as Promise<unknown>).then(undefined, warn);
  } catch {
    warn();
  }
}

const OTEL_API = Symbol.for('opentelemetry.js.api.1');
let globalTracer: { provider: object; tracer: TracerLike } | undefined;

/**
 * The tracer of the globally registered OpenTelemetry provider, read from the API's own
 * process-wide registry (the `opentelemetry.js.api.1` global every copy of `@opentelemetry/api`
 * 1.x shares), so nothing is imported: no cost and no bundling trouble without OpenTelemetry.
 */
function registeredTracer(version: string): TracerLike | undefined {
  // The API's own registry entry; every field is checked before use.
  const api = (
    globalThis as Record<symbol, { trace?: { getTracer?: (name: string, version?: string) => TracerLike } } | undefined>
  )[OTEL_API];
  const provider = api?.trace;
  if (typeof provider?.getTracer !== 'function') return undefined;
  if (globalTracer?.provider !== provider)
    globalTracer = { provider, tracer: provider.getTracer('myr-gateway', version) };
  return globalTracer.tracer;
}

/**
 * What one call is observed by: hooks, log lines and its span. The facts of the last attempt
 * are kept as fields; an event object or a log line is built only when a hook or a log
 * level will receive it, so a client with neither pays for none.
 */
export class CallTrace {
  attempts = 0;
  #sentAt = 0;
  /** Whether an attempt ended; the fields below describe the last one. */
  #answered = false;
  #status: number | undefined;
  #durationMs = 0;
  #correlationId: string | undefined;
  #rateLimit: RateLimitInfo | undefined;
  #errorCode: string | undefined;
  readonly #observer: Observer;
  /** What every event and log line of the call names it by. */
  readonly #call: { method: string; path: string; referenceId: string | undefined };
  readonly #span: SpanLike | undefined;
  readonly #start: number;

  constructor(observer: Observer, spec: CallShape, span: SpanLike | undefined) {
    this.#observer = observer;
    this.#call = { method: spec.method, path: `/${spec.path}`, referenceId: spec.referenceId };
    this.#span = span;
    this.#start = observer.now();
  }

  #requestEvent(): RequestEvent {
    return { ...this.#call, attempt: this.attempts };
  }

  #responseEvent(): ResponseEvent {
    return {
      ...this.#call,
      attempt: this.attempts,
      status: this.#status,
      durationMs: this.#durationMs,
      correlationId: this.#correlationId,
      rateLimit: this.#rateLimit,
      errorCode: this.#errorCode,
    };
  }

  /** Before each attempt is sent. */
  request(): void {
    this.attempts += 1;
    const obs = this.#observer;
    this.#sentAt = obs.now();
    const hook = obs.options.onRequest;
    const debug = obs.log.enabled('debug');
    if (!hook && !debug) return;
    const event = this.#requestEvent();
    callHook(hook, event, obs.log, 'onRequest');
    if (debug) obs.log.write('debug', `${event.method} ${event.path} attempt ${event.attempt}`, event);
  }

  /**
   * After each attempt: `response` when an answer came, `error` when the attempt failed.
   * `rateLimit`: the answer's `X-RateLimit-*` headers, as the attempt already read them.
   */
  response(
    response: Response | undefined,
    error: MyrGatewayError | undefined,
    rateLimit: RateLimitInfo | undefined,
  ): void {
    const obs = this.#observer;
    this.#answered = true;
    this.#status = response?.status;
    this.#durationMs = obs.now() - this.#sentAt;
    this.#correlationId = error?.correlationId ?? (response ? correlationIdFrom(response.headers) : undefined);
    this.#rateLimit = response ? rateLimit : undefined;
    this.#errorCode = error === undefined ? undefined : String(error.code);
    const hook = obs.options.onResponse;
    const debug = obs.log.enabled('debug');
    if (!hook && !debug) return;
    const event = this.#responseEvent();
    callHook(hook, event, obs.log, 'onResponse');
    if (debug) {
      obs.log.write(
        'debug',
        `${event.method} ${event.path} attempt ${event.attempt}: ${event.status ?? event.errorCode} in ${event.durationMs} ms`,
        event,
      );
    }
  }

  /** Before the wait that precedes the next attempt. Builds nothing when no hook, log level or span wants it. */
  retry(delayMs: number): void {
    const obs = this.#observer;
    const hook = obs.options.onRetry;
    const info = obs.log.enabled('info');
    if (!this.#answered || (!hook && !info && !this.#span)) return;
    const event: RetryEvent = { ...this.#responseEvent(), delayMs };
    callHook(hook, event, obs.log, 'onRetry');
    if (info)
      obs.log.write(
        'info',
        `${event.method} ${event.path} attempt ${event.attempt} failed with ${event.errorCode}; retrying in ${delayMs} ms`,
        event,
      );
    // Unlike setAttributes, an event keeps a key whose value is undefined: only what is known is set.
    this.#span?.addEvent('myr.retry', {
      'myr.attempt': event.attempt,
      'myr.retry.delay_ms': delayMs,
      ...(event.errorCode === undefined ? {} : { 'error.type': event.errorCode }),
      ...(event.status === undefined ? {} : { 'http.response.status_code': event.status }),
    });
  }

  /** Ends a call that failed with `error`: the span's outcome and one log line. */
  end(error: unknown): void {
    this.#finish(error, this.#status);
  }

  /** Ends a call whose answer (HTTP `status`) was a success; returns what the result carries as `lastResponse`. */
  succeeded(status: number): ResponseInfo {
    const durationMs = this.#finish(undefined, status);
    return {
      status,
      correlationId: this.#correlationId,
      rateLimit: this.#rateLimit,
      attempts: this.attempts,
      durationMs,
    };
  }

  /** Sets the span's outcome and logs one line; returns the call's duration. */
  #finish(error: unknown, answered: number | undefined): number {
    const obs = this.#observer;
    const durationMs = obs.now() - this.#start;
    const failure = error instanceof MyrGatewayError ? error : undefined;
    const code = error === undefined ? undefined : failure ? String(failure.code) : 'UNKNOWN';
    const status = failure ? failure.status : answered;
    const correlationId = failure ? failure.correlationId : this.#correlationId;
    const rateLimit = this.#rateLimit;
    const span = this.#span;
    if (span) {
      setAttributes(span, {
        'myr.attempts': this.attempts,
        'http.response.status_code': status,
        'myr.correlation_id': correlationId,
        'myr.rate_limit.limit': rateLimit?.limit,
        'myr.rate_limit.remaining': rateLimit?.remaining,
        'myr.rate_limit.reset': rateLimit?.reset,
        'error.type': code,
      });
      if (code !== undefined) span.setStatus({ code: SPAN_STATUS_ERROR, message: code });
      span.end();
    }
    if (obs.log.enabled('info')) {
      const fields = {
        ...this.#call,
        attempts: this.attempts,
        status,
        durationMs,
        correlationId,
        rateLimit,
        errorCode: code,
      };
      const outcome = code === undefined ? `${status}` : `failed with ${code}`;
      obs.log.write(
        'info',
        `${fields.method} ${fields.path} ${outcome} in ${durationMs} ms (${fields.attempts} attempt${fields.attempts === 1 ? '' : 's'})`,
        fields,
      );
    }
    return durationMs;
  }
}

/** The parts of a call spec the observer reads. */
export interface CallShape {
  method: string;
  path: string;
  operation: string;
  referenceId?: string | undefined;
}

/** A client's observability: one per client, handing a {@link CallTrace} to every call. */
export class Observer {
  declare readonly options: ObserveOptions;
  declare readonly log: Log;
  declare readonly now: () => number;
  readonly #version: string;

  constructor(options: ObserveOptions, version: string) {
    this.options = options;
    this.log = new Log(options.logger, options.logLevel ?? (options.logger ? 'warn' : undefined));
    this.now = options.now;
    this.#version = version;
  }

  /** The tracer a call's span comes from: the configured one, else the registered one, if any. */
  #tracer(): TracerLike | undefined {
    const configured = this.options.tracer;
    return configured === false ? undefined : (configured ?? registeredTracer(this.#version));
  }

  /** Whether calls run in a span now (a tracer is configured, or one is registered globally). */
  traced(): boolean {
    return this.#tracer() !== undefined;
  }

  /** Runs `call` inside a span when a tracer is configured or registered; `call` ends its trace. */
  run<T>(spec: CallShape, call: (trace: CallTrace) => Promise<T>): Promise<T> {
    const tracer = this.#tracer();
    const go = (span: SpanLike | undefined): Promise<T> => call(new CallTrace(this, spec, span));
    if (!tracer) return go(undefined);
    const route = template(spec.path);
    return runTraced(
      tracer,
      `myr-gateway ${spec.method} ${route}`,
      {
        kind: SPAN_KIND_CLIENT,
        attributes: {
          'http.request.method': spec.method,
          'url.template': route,
          'myr.operation': spec.operation,
          ...(spec.referenceId === undefined ? {} : { 'myr.reference_id': spec.referenceId }),
        },
      },
      go,
      () => this.log.warnOnce('tracer', 'the OpenTelemetry tracer threw; the call went on, its span may be incomplete'),
    );
  }
}
