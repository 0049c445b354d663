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
import { readRateLimit } from '../pacing/rate-limit-headers.js';
import { runTraced, setAttributes, SPAN_KIND_CLIENT, SPAN_STATUS_ERROR, type SpanLike, type TracerLike } from './trace.js';

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
    if (typeof (result as PromiseLike<unknown> | undefined)?.then === 'function') (result as Promise<unknown>).then(undefined, warn);
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
  const api = (globalThis as Record<symbol, { trace?: { getTracer?: (name: string, version?: string) => TracerLike } } | undefined>)[OTEL_API];
  const provider = api?.trace;
  if (typeof provider?.getTracer !== 'function') return undefined;
  if (globalTracer?.provider !== provider) globalTracer = { provider, tracer: provider.getTracer('myr-gateway', version) };
  return globalTracer.tracer;
}

/** What one call is observed by: hooks, log lines and its span. */
export class CallTrace {
  attempts = 0;
  #sentAt = 0;
  #last: ResponseEvent | undefined;
  readonly #observer: Observer;
  readonly #event: Pick<RequestEvent, 'method' | 'path' | 'referenceId'>;
  readonly #span: SpanLike | undefined;
  readonly #start: number;

  constructor(observer: Observer, spec: CallShape, span: SpanLike | undefined) {
    this.#observer = observer;
    this.#event = { method: spec.method, path: `/${spec.path}`, referenceId: spec.referenceId };
    this.#span = span;
    this.#start = observer.now();
  }

  /** Before each attempt is sent. */
  request(): void {
    this.attempts += 1;
    const obs = this.#observer;
    this.#sentAt = obs.now();
    const event: RequestEvent = { ...this.#event, attempt: this.attempts };
    callHook(obs.options.onRequest, event, obs.log, 'onRequest');
    if (obs.log.enabled('debug')) obs.log.write('debug', `${event.method} ${event.path} attempt ${event.attempt}`, event);
  }

  /** After each attempt: `response` when an answer came, `error` when the attempt failed. */
  response(response: Response | undefined, error: MyrGatewayError | undefined): void {
    const obs = this.#observer;
    const now = obs.now();
    const event: ResponseEvent = {
      ...this.#event,
      attempt: this.attempts,
      status: response?.status,
      durationMs: now - this.#sentAt,
      correlationId: error?.correlationId ?? (response ? correlationIdFrom(response.headers) : undefined),
      rateLimit: response ? readRateLimit(response.headers, now) : undefined,
      errorCode: error === undefined ? undefined : String(error.code),
    };
    this.#last = event;
    callHook(obs.options.onResponse, event, obs.log, 'onResponse');
    if (obs.log.enabled('debug')) {
      obs.log.write('debug', `${event.method} ${event.path} attempt ${event.attempt}: ${event.status ?? event.errorCode} in ${event.durationMs} ms`, event);
    }
  }

  /** Before the wait that precedes the next attempt. */
  retry(delayMs: number): void {
    const obs = this.#observer;
    const last = this.#last;
    if (!last) return;
    const event: RetryEvent = { ...last, delayMs };
    callHook(obs.options.onRetry, event, obs.log, 'onRetry');
    obs.log.write('info', `${event.method} ${event.path} attempt ${event.attempt} failed with ${event.errorCode}; retrying in ${delayMs} ms`, event);
    this.#span?.addEvent('myr.retry', {
      'myr.attempt': event.attempt,
      'myr.retry.delay_ms': delayMs,
      'error.type': event.errorCode,
      'http.response.status_code': event.status,
    });
  }

  /** Ends the call: sets the span's outcome and logs one line. Returns the response metadata. */
  end(error: unknown): ResponseInfo | undefined {
    const obs = this.#observer;
    const last = this.#last;
    const durationMs = obs.now() - this.#start;
    const code = error === undefined ? undefined : error instanceof MyrGatewayError ? String(error.code) : 'UNKNOWN';
    const fields = {
      ...this.#event,
      attempts: this.attempts,
      status: error instanceof MyrGatewayError ? error.status : last?.status,
      durationMs,
      correlationId: error instanceof MyrGatewayError ? error.correlationId : last?.correlationId,
      rateLimit: last?.rateLimit,
      errorCode: code,
    };
    const span = this.#span;
    if (span) {
      setAttributes(span, {
        'myr.attempts': fields.attempts,
        'http.response.status_code': fields.status,
        'myr.correlation_id': fields.correlationId,
        'myr.rate_limit.limit': fields.rateLimit?.limit,
        'myr.rate_limit.remaining': fields.rateLimit?.remaining,
        'myr.rate_limit.reset': fields.rateLimit?.reset,
        'error.type': code,
      });
      if (code !== undefined) span.setStatus({ code: SPAN_STATUS_ERROR, message: code });
      span.end();
    }
    const outcome = code === undefined ? `${fields.status}` : `failed with ${code}`;
    obs.log.write('info', `${fields.method} ${fields.path} ${outcome} in ${durationMs} ms (${fields.attempts} attempt${fields.attempts === 1 ? '' : 's'})`, fields);
    if (error !== undefined || last?.status === undefined) return undefined;
    return { status: last.status, correlationId: last.correlationId, rateLimit: last.rateLimit, attempts: this.attempts, durationMs };
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
  readonly options: ObserveOptions;
  readonly log: Log;
  readonly now: () => number;
  readonly #version: string;

  constructor(options: ObserveOptions, version: string) {
    this.options = options;
    this.log = new Log(options.logger, options.logLevel ?? (options.logger ? 'warn' : undefined));
    this.now = options.now;
    this.#version = version;
  }

  /** Runs `call` inside a span when a tracer is configured or registered; `done` receives the response metadata. */
  run<T>(spec: CallShape, call: (trace: CallTrace) => Promise<T>, done: (info: ResponseInfo | undefined) => void): Promise<T> {
    const configured = this.options.tracer;
    const tracer = configured === false ? undefined : (configured ?? registeredTracer(this.#version));
    const go = async (span: SpanLike | undefined): Promise<T> => {
      const trace = new CallTrace(this, spec, span);
      let result: T;
      try {
        result = await call(trace);
      } catch (error) {
        trace.end(error);
        throw error;
      }
      done(trace.end(undefined));
      return result;
    };
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
      () => this.log.warnOnce('tracer', 'the OpenTelemetry tracer threw; the call went on untouched, its span may be incomplete'),
    );
  }
}
