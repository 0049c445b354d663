/**
 * The life of a claim while the merchant's handler runs: renew it, bound the wait for the
 * handler, and record the result even when the store stumbles. The long-lived renewal
 * timer is unref'd and every timer is cleared, so nothing keeps the process alive beyond
 * the bounded wait for an answer (at most `handlerTimeoutMs`, then ~300 ms of retries here; a
 * store may retry each attempt itself, `RedisWebhookStore` through a failover up to the claim TTL).
 *
 * @module
 */
import { ClaimLostError, WebhookHandlerError } from './errors.js';
import { renewEveryMs } from './delivery-policy.js';
import type { LedgerWarning, PaymentOrder, WebhookStore } from './stores/types.js';
import { unref } from '../core/wait.js';

/**
 * @internal Reports a problem of a claim (the handler's and runOnce's `onError`); `warn` for
 * what did not change the outcome (a store warning), else an error.
 */
export type ClaimReport = (error: WebhookHandlerError, level?: 'warn' | 'error') => void;

const WARNINGS: Readonly<Record<LedgerWarning, string>> = {
  foreign_value: 'a value the store did not write was replaced',
  under_replicated: 'too few replicas acknowledged the ledger write',
};

/** @internal Reports what a store noticed about its ledger (see {@link LedgerWarning}). */
export function reportWarning(warning: LedgerWarning | undefined, report: ClaimReport): void {
  if (warning !== undefined) report(new WebhookHandlerError('store', WARNINGS[warning]), 'warn');
}

/*
 * The two waits below take no signal and stay ref'd (an answer is owed to the sender). They
 * are this entry's own rather than core/wait.ts's within()/wait(): those carry the abort
 * handling this entry never uses, about 160 bytes gzipped that the 8 kB budget of the
 * webhooks bundle (test/packaging/budgets.mjs) has no room for.
 */

/** A short, bounded delay (kept ref'd: the completion it waits for must still happen). */
function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** @internal The result of the merchant's handler: what it returned, or what it threw. */
export type Settled<T> = { readonly ok: true; readonly value: T } | { readonly ok: false; readonly error: unknown };

/** @internal Returned by {@link settleWithin} when the handler did not settle in time. */
export const TIMED_OUT = Symbol('timed out');

/** @internal Runs the handler, turning a sync throw or a rejection into a value. */
export function settle<T>(run: () => T | Promise<T>): Promise<Settled<T>> {
  return new Promise<T>((resolve) => resolve(run())).then(
    (value) => ({ ok: true, value }) as const,
    (error: unknown) => ({ ok: false, error }) as const,
  );
}

/**
 * @internal The handler's result, or {@link TIMED_OUT} after `ms`. The timer stays ref'd
 * (an answer is owed) and is cleared as soon as the handler settles.
 */
export function settleWithin<T>(settled: Promise<Settled<T>>, ms: number): Promise<Settled<T> | typeof TIMED_OUT> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<typeof TIMED_OUT>((resolve) => {
    timer = setTimeout(() => resolve(TIMED_OUT), ms);
  });
  return Promise.race([settled, timeout]).finally(() => clearTimeout(timer));
}

/**
 * @internal A claim held while the work runs: renewed until the work settles, then recorded
 * done or released, each at most once.
 */
export interface Lease {
  /**
   * Records the finished run (retried; on a store that keeps failing, remembered in this
   * process, see {@link unrecorded}) with the payment's mark when given, and reports a lost
   * claim (once per run), a store warning or the failure.
   */
  record(completedTtlMs: number, order: PaymentOrder | undefined): Promise<void>;
  /** Gives a failed run's claim back for a retry, reporting a store failure or a lost claim. */
  release(): Promise<void>;
}

/**
 * @internal Renews the claim every third of its TTL while the handler runs, so that a
 * retry cannot take the key and run the handler a second time concurrently. Stops when
 * the run is recorded or released, when the store says the token lost the key, or after
 * `maxMs` (a handler that never settles must not hold the key for ever).
 */
export function keepClaim(
  store: WebhookStore,
  key: string,
  token: string,
  ttlMs: number,
  maxMs: number,
  report: ClaimReport,
): Lease {
  const started = Date.now();
  let stopped = false;
  let lost = false;
  let busy = false;
  const stop = () => {
    stopped = true;
    clearInterval(timer);
  };
  const tick = async () => {
    if (stopped || busy) return;
    const elapsed = Date.now() - started;
    if (elapsed >= maxMs) {
      stop();
      report(
        new WebhookHandlerError('handler', 'the webhook handler outlived maxRenewalMs: its claim is no longer renewed'),
      );
      return;
    }
    if (typeof store.renew !== 'function') {
      if (elapsed < ttlMs) return;
      stop();
      report(
        new WebhookHandlerError(
          'store',
          'the webhook handler outlived inFlightTtlMs on a store with no renew(): it may run twice',
        ),
      );
      return;
    }
    busy = true;
    try {
      const held = await store.renew(key, token, ttlMs);
      if (!held && !stopped) {
        stop();
        lost = true;
        report(new ClaimLostError('renew', key));
      }
    } catch (error) {
      report(new WebhookHandlerError('store', 'the idempotency store failed to renew a running claim', error));
    } finally {
      busy = false;
    }
  };
  const timer = unref(setInterval(() => void tick(), renewEveryMs(ttlMs)));
  return {
    async record(completedTtlMs, order) {
      const result = await completeWithRetries(store, key, token, completedTtlMs, order);
      stop();
      if (!result.recorded) {
        // The work did finish: it counts as processed. This process remembers it and answers
        // duplicate; another process may run it again once the claim expires (docs/webhooks.md).
        unrecorded.add(store, key, token, order);
        report(
          new WebhookHandlerError(
            'store',
            'the idempotency store failed, three times, to record a finished run',
            result.error,
          ),
        );
        return;
      }
      // Not again when a renewal already said so.
      if (result.lost && !lost) report(new ClaimLostError('complete', key));
      reportWarning(result.warning, report);
    },
    async release() {
      stop();
      try {
        if ((await store.release(key, token)) === false && !lost) report(new ClaimLostError('release', key));
      } catch (error) {
        report(new WebhookHandlerError('store', 'the idempotency store failed to release the claim', error));
      }
    },
  };
}

/** Waits before the second and third attempt at recording a finished callback. */
const COMPLETE_RETRY_DELAYS_MS = [50, 250];

/** @internal What recording a finished callback came to. */
export type Recorded =
  | { readonly recorded: false; readonly error: unknown }
  /** `lost`: the claim was no longer this token's; `warning`: what the store noticed. */
  | { readonly recorded: true; readonly lost: boolean; readonly warning?: LedgerWarning | undefined };

/**
 * @internal Records a finished callback, retrying a failing store twice (bounded: about
 * 300 ms in all). A `false` after a failed attempt is not a lost claim: the failed attempt
 * may have recorded it already.
 */
export async function completeWithRetries(
  store: WebhookStore,
  key: string,
  token: string,
  ttlMs: number,
  order?: PaymentOrder,
): Promise<Recorded> {
  let error: unknown;
  for (let attempt = 0; attempt <= COMPLETE_RETRY_DELAYS_MS.length; attempt++) {
    if (attempt > 0) await sleep(COMPLETE_RETRY_DELAYS_MS[attempt - 1] as number);
    try {
      const answer = await store.complete(key, token, ttlMs, order);
      if (answer === 'under_replicated') return { recorded: true, lost: false, warning: answer };
      return { recorded: true, lost: answer === false && attempt === 0 };
    } catch (caught) {
      error = caught;
    }
  }
  return { recorded: false, error };
}

/** Most keys remembered per store as finished-but-unrecorded (the store failed to complete them). */
const MAX_UNRECORDED = 10_000;
type Unrecorded = Map<string, [token: string, order: PaymentOrder | undefined]>;
const UNRECORDED = new WeakMap<WebhookStore, Unrecorded>();

/**
 * @internal Keys whose work finished in this process but that `store` failed to record, with
 * their claim token and payment order (a REFUNDED recorded late still raises its payment's
 * mark): the webhook handler and `runOnce` share it per store, so neither runs a
 * finished key again (a callback after the job, the job after a callback, or either twice).
 */
export const unrecorded = {
  add(store: WebhookStore, key: string, token: string, order?: PaymentOrder): void {
    let keys = UNRECORDED.get(store);
    if (!keys) UNRECORDED.set(store, (keys = new Map<string, [token: string, order: PaymentOrder | undefined]>()));
    const oldest = keys.keys().next();
    if (keys.size >= MAX_UNRECORDED && !oldest.done) keys.delete(oldest.value);
    keys.set(key, [token, order]);
  },
  /**
   * Tries again to record a finished key remembered here; true when it was one (the caller must
   * then treat the work as done, whether or not the store took it this time).
   */
  async settle(store: WebhookStore, key: string, completedTtlMs: number): Promise<boolean> {
    const entry = UNRECORDED.get(store)?.get(key);
    if (entry === undefined) return false;
    if ((await completeWithRetries(store, key, entry[0], completedTtlMs, entry[1])).recorded)
      UNRECORDED.get(store)?.delete(key);
    return true;
  },
};
