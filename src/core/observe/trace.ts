/**
 * The slice of OpenTelemetry's tracing API the SDK uses, as structural types, so that neither
 * the package nor its type declarations need `@opentelemetry/api` (an optional peer). An
 * OpenTelemetry `Tracer` fits {@link TracerLike} as it is.
 *
 * @module
 */

/** A span attribute value (OpenTelemetry's primitive `AttributeValue`s). */
export type SpanAttributeValue = string | number | boolean;

/** Span attributes; undefined values are left out. */
export type SpanAttributes = Record<string, SpanAttributeValue | undefined>;

/** The methods of an OpenTelemetry `Span` the SDK calls. */
export interface SpanLike {
  /** Sets one attribute. */
  setAttribute(key: string, value: SpanAttributeValue): unknown;
  /** Records an event (a retry). */
  addEvent(name: string, attributes?: SpanAttributes): unknown;
  /** Marks the span failed. */
  setStatus(status: { code: number; message?: string }): unknown;
  /** Ends the span. */
  end(): void;
}

/**
 * An OpenTelemetry `Tracer`, for example `trace.getTracer('checkout')` from
 * `@opentelemetry/api`. Only `startActiveSpan` is used.
 *
 * @example
 * ```ts
 * import { trace } from '@opentelemetry/api';
 * const tracer: TracerLike = trace.getTracer('checkout');
 * ```
 */
export interface TracerLike {
  /**
   * Runs `fn` inside a new active span.
   * @typeParam F - the function run in the span; its result is returned.
   */
  startActiveSpan<F extends (span: SpanLike) => unknown>(
    name: string,
    options: { kind?: number; attributes?: SpanAttributes },
    fn: F,
  ): ReturnType<F>;
}

/** OpenTelemetry's `SpanStatusCode.ERROR` and `SpanKind.CLIENT` (numeric enums of the API). */
export const SPAN_STATUS_ERROR = 2;
export const SPAN_KIND_CLIENT = 2;

/** Whether `value` can serve as a tracer (checked at construction, so a typo fails early). */
export function isTracer(value: unknown): value is TracerLike {
  return value !== null && typeof value === 'object' && typeof (value as TracerLike).startActiveSpan === 'function'; // a guard: only reads the property it checks
}

/** Sets the attributes that have a value. */
export function setAttributes(span: SpanLike, attributes: SpanAttributes): void {
  for (const [key, value] of Object.entries(attributes)) if (value !== undefined) span.setAttribute(key, value);
}

/**
 * Runs `work` inside a span of `tracer`, so that the tracer can never change what `work`
 * returns: a tracer that throws before calling back leaves `work` to run untraced, one that
 * throws after it started is ignored (the money call's own result stands), and every span
 * method that throws is swallowed. `onTracerError` hears about it (to warn once).
 */
export function runTraced<T>(
  tracer: TracerLike,
  name: string,
  options: { kind?: number; attributes?: SpanAttributes },
  work: (span: SpanLike | undefined) => Promise<T>,
  onTracerError: (error: unknown) => void,
): Promise<T> {
  let started: Promise<T> | undefined;
  try {
    // What it returns is `started` (handled by our caller, below), or whatever a tracer that
    // breaks the contract returns instead: the work is taken from inside the callback.
    void tracer.startActiveSpan(name, options, (span: SpanLike) => (started = work(guardSpan(span, onTracerError))));
  } catch (error) {
    onTracerError(error);
  }
  return started ?? work(undefined);
}

/** A span whose methods never throw into the SDK's code. */
function guardSpan(span: SpanLike, onTracerError: (error: unknown) => void): SpanLike {
  const guard =
    <A extends unknown[]>(call: (...args: A) => unknown) =>
    (...args: A): undefined => {
      try {
        call(...args);
      } catch (error) {
        onTracerError(error);
      }
      return undefined;
    };
  return {
    setAttribute: guard((...args: Parameters<SpanLike['setAttribute']>) => span.setAttribute(...args)),
    addEvent: guard((...args: Parameters<SpanLike['addEvent']>) => span.addEvent(...args)),
    setStatus: guard((...args: Parameters<SpanLike['setStatus']>) => span.setStatus(...args)),
    end: guard(() => span.end()),
  };
}
