/**
 * Warnings a test expects, captured instead of printed, so that `npm test` output shows only
 * real failures: a logger that keeps its warn and error lines, and a console.warn capture for
 * the clients that log to the console by default.
 */
import { afterAll, beforeAll, vi } from 'vitest';

/** The warning a process prints once, at the 20th client of one merchant (client-census.ts). */
export const MANY_CLIENTS_WARNING =
  /^myr-gateway: 20 MyrGateway clients were created in this process for merchant \S+ at \S+: create one \(at module scope\) and reuse it\./;

/** A `logger` option that keeps every warn and error line (the message, without its fields). */
export function warningLogger(): {
  lines: string[];
  logger: { debug(): void; info(): void; warn(message: unknown): void; error(message: unknown): void };
} {
  const lines: string[] = [];
  const keep = (message: unknown) => void lines.push(String(message));
  return { lines, logger: { debug() {}, info() {}, warn: keep, error: keep } };
}

/**
 * Captures console.warn for the whole test file (registers its own beforeAll and afterAll);
 * `lines` holds the first argument of every call.
 */
export function captureConsoleWarn(): { lines: string[] } {
  const lines: string[] = [];
  let spy: { mockRestore(): void } | undefined;
  beforeAll(() => {
    spy = vi.spyOn(console, 'warn').mockImplementation((message: unknown) => void lines.push(String(message)));
  });
  afterAll(() => spy?.mockRestore());
  return { lines };
}
