/**
 * The one abort-aware wait of the SDK: a promise raced against a timer and a signal, with the
 * timer and the signal's listener removed however it ends, so no waiter keeps the process
 * alive (or a listener attached to a long-lived signal) after its call is over. Backoff, store
 * timeouts, the pacing queue, token refresh waits, the webhook handler's timeout and the SQL
 * ledger's run and statement times all build on it. It imports nothing, so the webhooks entry
 * may share it (see the allow-list in test/unit/webhooks/imports.test.ts). It decides no
 * duration: how long to wait before a retry is `retryDelay` in retry-policy.ts.
 *
 * @module
 */

/** How a {@link within} wait ended, for its `done` hook. */
export type WaitEnd = 'settled' | 'timeout' | 'aborted';

/**
 * Settles a {@link within} wait from the inside, synchronously: for a waiter woken by other
 * events (a slot freed) that must stop listening at the moment it is woken.
 */
export type Settle<T> = (resolve: (value: T) => void, reject: (error: unknown) => void) => void;

/** What bounds a {@link within} wait: its signal, its time, and a hook for its end. */
export type WaitBounds<U> = {
  /** An abort ends the wait at once, rejecting with the signal's reason. */
  readonly signal?: AbortSignal | undefined;
  /** Runs once, synchronously, as the wait ends (before any code awaiting it resumes). */
  readonly done?: ((end: WaitEnd) => void) | undefined;
} & (
  | { readonly ms?: undefined; readonly onTimeout?: undefined }
  | {
      /** Milliseconds before `onTimeout`. */
      readonly ms: number;
      /** What the wait comes to after `ms`: its value resolves, its throw rejects. */
      readonly onTimeout: () => U;
    }
);

/**
 * Settles like `value` (a promise, or a {@link Settle} called at once), unless `bounds.ms`
 * pass first (then like `onTimeout`) or `bounds.signal` aborts (then rejects with its reason;
 * at once when it already has). Either way the timer is cleared and the listener removed.
 *
 * @example
 * const answer = await within(store.get(key), { ms: 1000, signal, onTimeout: () => undefined });
 */
export function within<T, U = never>(value: Promise<T> | Settle<T>, bounds: WaitBounds<U>): Promise<T | U> {
  const { signal, done } = bounds;
  return new Promise<T | U>((resolve, reject) => {
    let timer: ReturnType<typeof setTimeout> | undefined;
    let ended = false;
    /** Settles through `settle`, once, after clearing the timer and the listener. */
    const end =
      <V>(how: WaitEnd, settle: (outcome: V) => void) =>
      (outcome: V) => {
        if (ended) return;
        ended = true;
        clearTimeout(timer);
        signal?.removeEventListener('abort', onAbort);
        done?.(how);
        settle(outcome);
      };
    const onAbort = () => end('aborted', reject)(signal?.reason);
    if (signal?.aborted) onAbort();
    const settled = end('settled', resolve);
    const failed = end('settled', reject);
    // Observed even after an abort: a late rejection of `value` must not go unhandled. A Settle
    // that throws rejects through this executor, before anything is armed.
    if (typeof value === 'function') value(settled, failed);
    else value.then(settled, failed);
    if (ended) return;
    signal?.addEventListener('abort', onAbort, { once: true });
    if (bounds.ms !== undefined) {
      const { onTimeout } = bounds;
      // A throw of onTimeout rejects the wait: the promise chain turns it into a rejection.
      timer = setTimeout(() => end('timeout', resolve)(Promise.resolve().then(onTimeout)), bounds.ms);
    }
  });
}

/**
 * Resolves after `ms`, or rejects with `signal`'s reason as soon as it aborts (at once when it
 * already has). The timer is ref'd: a process waits for a backoff it was asked to make.
 *
 * @example
 * await wait(1000, AbortSignal.timeout(5000)); // a backoff the call's deadline can cut short
 */
export function wait(ms: number, signal?: AbortSignal): Promise<void> {
  return within<void, void>(() => undefined, { ms, signal, onTimeout: () => undefined });
}

/**
 * A timer that does not keep the process alive (where the runtime's timers have `unref`): for
 * background work (a lease renewal, a pump) that nobody awaits. A wait someone awaits stays
 * ref'd instead, or the process could exit before the awaited answer.
 *
 * @example
 * const renewal = unref(setInterval(renew, 1000));
 */
export function unref<T>(timer: T): T {
  (timer as { unref?: () => void }).unref?.();
  return timer;
}
