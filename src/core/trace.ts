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
  return value !== null && typeof value === 'object' && typeof (value as TracerLike).startActiveSpan === 'function';
}

/** Sets the attributes that have a value. */
export function setAttributes(span: SpanLike, attributes: SpanAttributes): void {
  for (const [key, value] of Object.entries(attributes)) if (value !== undefined) span.setAttribute(key, value);
}
