/**
 * The life of a claim while the merchant's handler runs: renew it, bound the wait for the
 * handler, and record the result even when the store stumbles. The long-lived renewal
 * timer is unref'd and every timer is cleared, so nothing keeps the process alive beyond
 * the bounded wait for an answer (at most `handlerTimeoutMs`, then ~300 ms of store retries).
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
  foreign_value: 'the ledger held a value the store did not write; the claim replaced it',
  under_replicated: 'too few replicas acknowledged the ledger write in time',
};

/** @internal Reports what a store noticed about its ledger (see {@link LedgerWarning}). */
export function reportWarning(warning: LedgerWarning | undefined, report: ClaimReport): void {
  if (warning !== undefined) report(new WebhookHandlerError('store', WARNINGS[warning], undefined), 'warn');
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

/** @internal The result of the merchant's handler. */
export type Settled = { readonly ok: true } | { readonly ok: false; readonly error: unknown };

/** @internal Returned by {@link settleWithin} when the handler did not settle in time. */
export const TIMED_OUT = Symbol('timed out');

/** @internal Runs the handler, turning a sync throw or a rejection into a value. */
export function settle(run: () => unknown): Promise<Settled> {
  return new Promise((resolve) => resolve(run())).then(
    () => ({ ok: true }) as const,
    (error: unknown) => ({ ok: false, error }) as const,
  );
}

/**
 * @internal The handler's result, or {@link TIMED_OUT} after `ms`. The timer stays ref'd
 * (an answer is owed) and is cleared as soon as the handler settles.
 */
export function settleWithin(settled: Promise<Settled>, ms: number): Promise<Settled | typeof TIMED_OUT> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<typeof TIMED_OUT>((resolve) => {
    timer = setTimeout(() => resolve(TIMED_OUT), ms);
  });
  return Promise.race([settled, timeout]).finally(() => clearTimeout(timer));
}

/** @internal A running renewal; `stop()` is idempotent. */
export interface Lease {
  stop(): void;
  /** True once a renewal found the claim gone (and reported it). */
  readonly lost: boolean;
}

/**
 * @internal Renews the claim every third of its TTL while the handler runs, so that a
 * retry cannot take the key and run the handler a second time concurrently. Stops when
 * stopped, when the store says the token lost the key, or after `maxMs` (a handler that
 * never settles must not hold the key for ever).
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
      report(new WebhookHandlerError('handler', 'the webhook handler is still running after maxRenewalMs; its claim is no longer renewed and expires after inFlightTtlMs', undefined));
      return;
    }
    if (typeof store.renew !== 'function') {
      if (elapsed < ttlMs) return;
      stop();
      report(new WebhookHandlerError('store', 'the webhook handler outlived inFlightTtlMs and the store has no renew(): a retry may now run it a second time', undefined));
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
      report(new WebhookHandlerError('store', 'the idempotency store failed to renew the claim of a running handler', error));
    } finally {
      busy = false;
    }
  };
  const timer = unref(setInterval(() => void tick(), renewEveryMs(ttlMs)));
  return {
    stop,
    get lost() {
      return lost;
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

/**
 * @internal Records a finished run and reports what went wrong: a lost claim (once per run,
 * not again when a renewal already said so), a store warning, or a store that failed three
 * times (then this process remembers the key, see {@link unrecorded}).
 */
export async function recordDone(
  store: WebhookStore,
  key: string,
  token: string,
  completedTtlMs: number,
  lease: Lease,
  report: ClaimReport,
  order?: PaymentOrder,
): Promise<void> {
  const result = await completeWithRetries(store, key, token, completedTtlMs, order);
  lease.stop();
  if (!result.recorded) {
    // The work did finish: it counts as processed. This process remembers it and answers
    // duplicate; another process may run it again once the claim expires (docs/webhooks.md).
    unrecorded.add(store, key, token, order);
    report(new WebhookHandlerError('store', 'the idempotency store failed, three times, to record a finished run', result.error));
    return;
  }
  if (result.lost && !lease.lost) report(new ClaimLostError('complete', key));
  reportWarning(result.warning, report);
}

/** @internal Gives a failed run's claim back for a retry, reporting a store failure or a lost claim. */
export async function releaseClaim(store: WebhookStore, key: string, token: string, lease: Lease, report: ClaimReport): Promise<void> {
  lease.stop();
  try {
    if ((await store.release(key, token)) === false && !lease.lost) report(new ClaimLostError('release', key));
  } catch (error) {
    report(new WebhookHandlerError('store', 'the idempotency store failed to release the claim', error));
  }
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
    if ((await completeWithRetries(store, key, entry[0], completedTtlMs, entry[1])).recorded) UNRECORDED.get(store)?.delete(key);
    return true;
  },
};
