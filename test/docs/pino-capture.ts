/**
 * Where pino writes while the doc snippets run: run-snippets.test.ts mocks `pino` so that
 * `pino()` is the real logger with this destination, and the runner can read the log lines
 * (and keep them off the console).
 */
export const pinoLines: string[] = [];

/** A pino destination (anything with `write`). */
export const pinoDestination = {
  write(line: string): void {
    pinoLines.push(line.trim());
  },
};
