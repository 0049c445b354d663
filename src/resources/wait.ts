/**
 * Polling a payment until it settles: the fallback when no callback can be received.
 *
 * @module
 */
import { AbortError } from '../core/errors/service.js';
import { MyrGatewayError } from '../core/errors/base.js';
import { PaymentPendingError } from '../core/errors/outcome.js';
import { millisecondsSetting } from '../core/settings.js';
import type { PaymentStatus } from '../schemas/payments.js';
import { TERMINAL_STATUSES } from '../schemas/statuses.js';

/** Options of `payments.waitForCompletion`. */
export interface WaitForCompletionOptions {
  /** Give up after this many milliseconds with a {@link PaymentPendingError}. */
  timeoutMs: number;
  /** Stops the wait (and a lookup in flight) with an {@link AbortError}. */
  signal?: AbortSignal | undefined;
  /**
   * First pause between lookups; it grows by half each time, up to 30 s, with jitter.
   * @default 2000
   */
  intervalMs?: number | undefined;
}

/** What the poller needs of the client. */
export interface PollDeps {
  retrieve(identifier: string, options: { signal?: AbortSignal; totalTimeout: number }): Promise<PaymentStatus>;
  sleep(ms: number, signal?: AbortSignal): Promise<void>;
  random(): number;
}

const MAX_INTERVAL_MS = 30_000;
const TERMINAL: ReadonlySet<string> = new Set(TERMINAL_STATUSES);

function checkOptions(options: WaitForCompletionOptions): number {
  const { timeoutMs, intervalMs } = options ?? ({} as WaitForCompletionOptions);
  // timeoutMs has no default: fallback NaN fails the same check as a missing value.
  millisecondsSetting(timeoutMs ?? Number.NaN, 0, 'timeoutMs', 'call');
  return millisecondsSetting(intervalMs, 2000, 'intervalMs', 'call');
}

/**
 * Looks the payment up until its status is terminal, pausing with backoff and jitter between
 * lookups. Lookups go through the client's pacing and retries like any call; a lookup that fails
 * retryably (rate limit, outage) is followed by the next one while time is left.
 */
export async function waitForCompletion(
  deps: PollDeps,
  identifier: string,
  options: WaitForCompletionOptions,
): Promise<PaymentStatus> {
  let interval = checkOptions(options);
  const { timeoutMs, signal } = options;
  const started = performance.now();
  // Elapsed time also counts the pauses asked for, so an instant test sleep still ends the wait.
  let paused = 0;
  const left = () => timeoutMs - Math.max(performance.now() - started, paused);
  let lastStatus: PaymentStatus | undefined;
  let lastError: unknown;
  for (;;) {
    if (signal?.aborted)
      throw new AbortError('ABORTED: waitForCompletion was aborted by its signal', { code: 'ABORTED' });
    try {
      lastStatus = await deps.retrieve(identifier, {
        ...(signal ? { signal } : {}),
        totalTimeout: Math.max(1, Math.ceil(left())),
      });
      if (TERMINAL.has(lastStatus.status)) return lastStatus;
      lastError = undefined;
    } catch (error) {
      if (!(error instanceof MyrGatewayError) || !error.retryable || error instanceof AbortError) throw error;
      lastError = error;
    }
    const pause = Math.min(Math.round(interval * (0.75 + deps.random() / 2)), MAX_INTERVAL_MS);
    if (pause >= left()) {
      throw new PaymentPendingError(
        `PAYMENT_PENDING: payment ${identifier} did not reach a terminal status within ${timeoutMs} ms` +
          (lastStatus ? ` (last status ${lastStatus.status})` : ' (no lookup answered)') +
          '; its callback will still bring the outcome: wait for it, or poll later.',
        { identifier, lastStatus, cause: lastError },
      );
    }
    paused += pause;
    await deps.sleep(pause, signal).catch(() => {
      throw new AbortError('ABORTED: waitForCompletion was aborted by its signal', { code: 'ABORTED' });
    });
    interval = Math.min(interval * 1.5, MAX_INTERVAL_MS);
  }
}
