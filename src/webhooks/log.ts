/**
 * One log line per refused or failed callback through the merchant's logger (console, pino,
 * winston: the client's `Logger` shape). Lines carry fixed messages and signed ids only:
 * never the body, the signature, a key, or the text of an error the merchant's code threw
 * (its name only; `onError` gets the error itself). A store that fails may tell its own
 * message instead of the fixed one (the SQL ledger: the table, and the database's own message
 * and code, masked of secrets, by `src/sql/database-errors.ts`).
 *
 * @module
 */
import type { Logger } from '../core/observe/log.js';
import type { WebhookHandlerError, WebhookVerificationError } from './errors.js';
import type { WebhookEvent } from './events.js';

/** @internal How loud a line is. */
export type WebhookLogLevel = 'warn' | 'error';

/** @internal Writes one line; does nothing without a logger. Never throws. */
export type WebhookLog = (
  level: WebhookLogLevel,
  error: WebhookVerificationError | WebhookHandlerError,
  event?: WebhookEvent,
) => void;

const PINO = Symbol.for('pino.serializers');

function causeName(cause: unknown): string | undefined {
  if (cause === undefined) return undefined;
  return cause instanceof Error ? cause.name : typeof cause;
}

/** @internal The handler's log line writer over `logger` (silent without one). */
export function webhookLog(logger: Logger | undefined): WebhookLog {
  if (logger === undefined) return () => {};
  const pino = PINO in logger;
  return (level, error, event) => {
    const fields: Record<string, unknown> = { ...error.toJSON() };
    const cause = causeName(error.cause);
    if (cause !== undefined) fields.cause = cause;
    if (event) {
      fields.webhook_id = event.signed.webhook_id;
      fields.payment_id = event.signed.payment_id;
      fields.payment_status = event.signed.status;
    }
    const text = `myr-gateway webhook: ${error.message}`;
    try {
      const method = logger[level] as (...args: unknown[]) => unknown; // a logger method; called with this logger's own argument order below
      if (pino) method.call(logger, fields, text);
      else method.call(logger, text, fields);
    } catch {
      // A broken logger must not change the answer to the gateway.
    }
  };
}
