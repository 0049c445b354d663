/**
 * Leveled logging through the merchant's logger (console, pino, winston or any object with
 * four methods). Callers pass only fixed, secret-free fields; see `observer.ts`.
 *
 * @module
 */

/** Where a warning goes: the client's logger, or console.warn. */
export type WarnSink = (message: string) => void;
/** The sink when no logger was given. */
export const consoleWarn: WarnSink = (message) => console.warn(`myr-gateway: ${message}`);

/** Levels of {@link Logger}, lowest first. */
export type LogLevel = 'debug' | 'info' | 'warn' | 'error';

type LogMethod = (message: never, ...rest: never[]) => unknown;

/**
 * A logger: `console`, a pino or winston logger, or any object with these four methods.
 * The SDK calls `logger.info(message, fields)`, or `logger.info(fields, message)` for pino.
 */
export interface Logger {
  /** Per-attempt detail (each request and answer). */
  debug: LogMethod;
  /** One line per call, and one per retry. */
  info: LogMethod;
  /** The SDK's own warnings: a hook or tracer that threw, a token store that failed or hung. */
  warn: LogMethod;
  /** Part of the logger shape the SDK accepts (console, pino, winston); the SDK writes nothing at this level. */
  error: LogMethod;
}

/** Rank of each level, lowest first ('off' above them all). */
const RANK: Readonly<Record<LogLevel | 'off', number>> = { debug: 0, info: 1, warn: 2, error: 3, off: 4 };
const PINO = Symbol.for('pino.serializers');

/** Leveled logging through the merchant's logger; without one, warnings go to console.warn. */
export class Log {
  readonly #logger: Logger | undefined;
  readonly #min: number;
  readonly #pino: boolean;
  readonly #warned = new Set<string>();

  constructor(logger: Logger | undefined, level: LogLevel | 'off' | undefined) {
    this.#logger = logger;
    this.#min = RANK[level ?? 'warn'] ?? RANK.warn;
    this.#pino = logger !== undefined && PINO in logger;
  }

  enabled(level: LogLevel): boolean {
    // Asked per attempt, so a table lookup rather than a search of the list.
    return RANK[level] >= this.#min;
  }

  /** A warning written once per client and `topic`. */
  warnOnce(topic: string, message: string): void {
    if (this.#warned.has(topic)) return;
    this.#warned.add(topic);
    this.write('warn', message);
  }

  write(level: LogLevel, message: string, fields?: object): void {
    if (!this.enabled(level)) return;
    const text = `myr-gateway: ${message}`;
    const logger = this.#logger;
    if (!logger) {
      // eslint-disable-next-line no-console -- a logLevel given without a logger logs to the console
      console[level](text, ...(fields === undefined ? [] : [fields]));
      return;
    }
    const method = logger[level] as (...args: unknown[]) => unknown; // a logger method; called with this logger's own argument order below
    try {
      if (fields === undefined) method.call(logger, text);
      else if (this.#pino) method.call(logger, fields, text);
      else method.call(logger, text, fields);
    } catch {
      // A broken logger must not fail a payment call.
    }
  }
}
