/**
 * Captures everything a client or webhook handler tells: log lines (every level), hook events,
 * OpenTelemetry spans (in-memory exporter) and console output, and scans it for secrets.
 */
import { inspect } from 'node:util';
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { expect, vi } from 'vitest';

export function observeCapture() {
  const lines: unknown[][] = [];
  const hooks: { hook: string; event: unknown }[] = [];
  const exporter = new InMemorySpanExporter();
  const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
  const line =
    (level: string) =>
    (...args: unknown[]) =>
      void lines.push([level, ...args]);
  const logger = { debug: line('debug'), info: line('info'), warn: line('warn'), error: line('error') };
  const hook = (name: string) => (event: unknown) => void hooks.push({ hook: name, event });
  const options = {
    logger,
    logLevel: 'debug' as const,
    onRequest: hook('onRequest'),
    onResponse: hook('onResponse'),
    onRetry: hook('onRetry'),
    tracer: provider.getTracer('test'),
  };
  const consoleSpies = (['log', 'info', 'debug', 'warn', 'error'] as const).map((name) =>
    vi.spyOn(console, name).mockImplementation(() => undefined),
  );
  const spans = () =>
    exporter
      .getFinishedSpans()
      .map((s) => ({ name: s.name, kind: s.kind, attributes: s.attributes, events: s.events, status: s.status }));
  /** Everything captured, as JSON and as util.inspect with hidden properties, in one string. */
  const dump = (): string => {
    const all = { lines, hooks, spans: spans(), console: consoleSpies.map((spy) => spy.mock.calls) };
    return `${JSON.stringify(all)}\n${inspect(all, { depth: Infinity, showHidden: true, maxArrayLength: Infinity, maxStringLength: Infinity })}`;
  };
  const restore = () => {
    for (const spy of consoleSpies) spy.mockRestore();
  };
  const flush = () => provider.forceFlush();
  return { options, lines, hooks, spans, dump, restore, flush, tracer: options.tracer };
}

/** Fails naming the secret when any of `secrets` occurs in `text`. */
export function expectNoSecret(text: string, secrets: Record<string, string>): void {
  for (const [name, secret] of Object.entries(secrets)) {
    expect(text.includes(secret), `${name} appears in the captured output`).toBe(false);
  }
}
