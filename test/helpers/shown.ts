/**
 * What a log or an error reporter can show of a value, in one string, to scan for secrets:
 * util.inspect as console.log prints it, at every depth with hidden properties, with showProxy
 * (`%o`) and without custom views, JSON.stringify (or what it threw), and JSON as loggers write
 * it, circular references cut (pino's and winston's safe stringify).
 */
import { format, inspect } from 'node:util';

export function shownInLogs(value: unknown): string {
  const seen = new WeakSet<object>();
  const cutCircular = (_: string, each: unknown) => {
    if (typeof each !== 'object' || each === null) return each;
    if (seen.has(each)) return '[Circular]';
    seen.add(each);
    return each;
  };
  return [
    inspect(value),
    inspect(value, { depth: Infinity, showHidden: true }),
    // console.log('%o', …) and the REPL: a Proxy shown as its target and handler.
    format('%o', value),
    inspect(value, { customInspect: false, depth: Infinity, showHidden: true }),
    orThrown(() => JSON.stringify(value)),
    orThrown(() => JSON.stringify(value, cutCircular)),
  ].join('\n');
}

/** What `show` answers, or what it threw (a circular structure, a stack overflow on endless getters): nothing of the value. */
function orThrown(show: () => string | undefined): string {
  try {
    return String(show());
  } catch (error) {
    return error instanceof Error ? error.name : 'thrown';
  }
}
