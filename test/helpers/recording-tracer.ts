/**
 * A stand-in for an OpenTelemetry tracer in the unit tests of the observer, of runTraced and of
 * the traced webhook handler: a {@link TracerLike} whose every span records what the SDK did to
 * it (its name and start options, the attributes, events and statuses set on it, how often it
 * was ended), plus one log of every span call in the order made. A `broken` span records each
 * call and then throws, as a failing exporter's span would.
 */
import type { SpanAttributes, SpanAttributeValue, SpanLike, TracerLike } from '../../src/core/observe/trace.js';

/** What the SDK did to one span. */
export interface RecordedSpan {
  /** The name the span was started with. */
  name: string;
  /** The options the span was started with, as given. */
  options: { kind?: number; attributes?: SpanAttributes };
  /** Every attribute set, the last value of each key. */
  attributes: Record<string, SpanAttributeValue>;
  /** Every event added, in order. */
  events: { name: string; attributes: SpanAttributes | undefined }[];
  /** Every status set, in order. */
  statuses: { code: number; message?: string }[];
  /** How many times `end()` was called. */
  ended: number;
}

/** How recorded spans behave. */
export interface RecordingOptions {
  /** Every span method throws (`span <call> broke`) after recording its call. */
  broken?: boolean;
}

/** A span of {@link recordingSpan}: the span itself, its record and the call log it writes to. */
export interface RecordingSpan {
  span: SpanLike;
  record: RecordedSpan;
  /** Every call made, in order: `attr <key>=<value>`, `event <name>`, `status <code>`, `end`. */
  calls: string[];
}

/**
 * A span that records what the SDK did to it into `record` and `calls`. Without a tracer (a
 * span handed to runTraced by hand, or to setAttributes) `record` starts with an empty name and
 * no options.
 */
export function recordingSpan(
  options: RecordingOptions = {},
  record: RecordedSpan = { name: '', options: {}, attributes: {}, events: [], statuses: [], ended: 0 },
  calls: string[] = [],
): RecordingSpan {
  const call = (what: string) => {
    calls.push(what);
    if (options.broken) throw new Error(`span ${what} broke`);
  };
  const span: SpanLike = {
    setAttribute: (key, value) => {
      record.attributes[key] = value;
      call(`attr ${key}=${String(value)}`);
    },
    addEvent: (name, attributes) => {
      record.events.push({ name, attributes });
      call(`event ${name}`);
    },
    setStatus: (status) => {
      record.statuses.push(status);
      call(`status ${status.code}`);
    },
    end: () => {
      record.ended += 1;
      call('end');
    },
  };
  return { span, record, calls };
}

/**
 * A tracer whose `startActiveSpan` runs the work in a {@link recordingSpan}: `spans` holds one
 * {@link RecordedSpan} a span started, in start order, and `calls` the calls made to all of them.
 */
export function recordingTracer(options: RecordingOptions = {}): {
  tracer: TracerLike;
  spans: RecordedSpan[];
  calls: string[];
} {
  const spans: RecordedSpan[] = [];
  const calls: string[] = [];
  const tracer: TracerLike = {
    startActiveSpan: (name, startOptions, fn) => {
      const record: RecordedSpan = { name, options: startOptions, attributes: {}, events: [], statuses: [], ended: 0 };
      spans.push(record);
      return fn(recordingSpan(options, record, calls).span) as never;
    },
  };
  return { tracer, spans, calls };
}
