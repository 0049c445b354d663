/**
 * The calls waiting for a pacing slot: first come first served, each bounded by its signal,
 * its deadline and what it may still wait on a shared store.
 *
 * @module
 */
import type { AcquireOptions } from './limiter-contract.js';
import { within } from '../wait.js';

interface Waiter {
  readonly signal: AbortSignal | undefined;
  readonly deadline: number;
  /** How long this call may still wait on a shared store (ms); Infinity when unbounded. */
  storeLeftMs: number;
  /** Charges time waited on the store to the call's budget. */
  readonly spendStore: ((ms: number) => void) | undefined;
  /** The call can absorb a 429 (`AcquireOptions.mayBeRefused`). */
  readonly mayBeRefused: boolean;
  grant(slot?: string): void;
  fail(error: unknown): void;
}

/**
 * Calls waiting for a slot, first come first served, each bounded by its signal and its
 * deadline (`onTimeout` builds the error).
 */
export class WaitQueue {
  readonly #waiters: Waiter[] = [];

  get length(): number {
    return this.#waiters.length;
  }

  add(
    options: AcquireOptions,
    now: number,
    onTimeout: () => unknown,
    storeLeftMs = Number.POSITIVE_INFINITY,
  ): Promise<string | undefined> {
    const spendStore = options.storeBudget?.spend;
    const { signal } = options;
    if (signal?.aborted) return Promise.reject(signal.reason as Error);
    // A waiter is woken by other events too (a slot freed, a limiter gave up), so it settles
    // through a Settle: the pump that grants it sees it gone from the queue at once, and an
    // abort right after a grant cannot take the slot back from the caller.
    let waiter: Waiter | undefined;
    const leave = () => {
      const i = waiter === undefined ? -1 : this.#waiters.indexOf(waiter);
      if (i >= 0) this.#waiters.splice(i, 1);
    };
    return within<string | undefined, never>(
      (resolve, reject) => {
        waiter = {
          signal,
          deadline: now + options.maxWaitMs,
          storeLeftMs,
          spendStore,
          mayBeRefused: options.mayBeRefused ?? true,
          grant: resolve,
          fail: reject,
        };
        this.#waiters.push(waiter);
      },
      {
        signal,
        ms: Math.max(1, Math.ceil(options.maxWaitMs)),
        onTimeout: () => {
          throw onTimeout();
        },
        done: leave,
      },
    );
  }

  /** The latest deadline of the waiting calls (0 when none waits). */
  latestDeadline(): number {
    return this.#waiters.reduce((latest, w) => Math.max(latest, w.deadline), 0);
  }

  /** The longest-waiting call, if any. */
  first(): Waiter | undefined {
    return this.#waiters[0];
  }

  /** The longest-waiting call that can absorb a 429, the one a slot that may be refused goes to. */
  firstThatMayBeRefused(): Waiter | undefined {
    return this.#waiters.find((w) => w.mayBeRefused);
  }

  /** The least store time left of the waiting calls (Infinity when none is bounded). */
  leastStoreLeft(): number {
    return this.#waiters.reduce((least, w) => Math.min(least, w.storeLeftMs), Number.POSITIVE_INFINITY);
  }

  /** Every waiting call spent `ms` waiting on the store; those with nothing left are removed and returned. */
  spendStore(ms: number): Waiter[] {
    for (const w of this.#waiters) {
      w.storeLeftMs -= ms;
      w.spendStore?.(ms);
    }
    const spent = this.#waiters.filter((w) => w.storeLeftMs <= 0);
    for (const w of spent) this.#waiters.splice(this.#waiters.indexOf(w), 1);
    return spent;
  }

  /** Every waiting call, removed from the queue. */
  drain(): Waiter[] {
    return this.#waiters.splice(0);
  }
}
