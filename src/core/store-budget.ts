/**
 * The token store's time budget: one call's store operations share one {@link StoreBudget}, so
 * their timeouts never add up, and each wait on the store ends with the value, the call's abort,
 * or a timeout marker the caller degrades on, never outliving the call.
 *
 * @module
 */

import { within } from './wait.js';

/**
 * The timeout marker. It never leaves the SDK: the token manager and vault catch it, warn
 * with {@link describeStoreFailure} and degrade, so it is not in the `MyrGatewayError` tree.
 */
class StoreTimeout extends Error {
  constructor() {
    super('the store did not answer in time');
    this.name = 'StoreTimeout';
  }
}
const storeTimedOut = (): never => {
  throw new StoreTimeout();
};

/**
 * Settles like `value`, or rejects: with `signal`'s reason when it aborts (the call is over),
 * or with a timeout marker after `ms` (the store is too slow; the caller degrades).
 */
export function bounded<T>(value: Promise<T>, signal: AbortSignal | undefined, ms: number): Promise<T> {
  return within(value, { signal, ms: Math.max(0, ms), onTimeout: storeTimedOut });
}

/** What a store operation under {@link watched} reports while it runs. */
export interface Watch {
  /** The operation is still getting somewhere (another process holds the refresh lock): the timeout starts again. */
  alive: () => void;
  /** No timeout while `work` runs (this process's own token request, bounded by its call). */
  hold: <T>(work: Promise<T>) => Promise<T>;
}

/**
 * Like {@link bounded}, for an operation that may legitimately last long as long as it shows
 * progress: it gets `firstMs` to show it (`alive` or `hold`), then `nextMs` between signs.
 */
export function watched<T>(
  start: (watch: Watch) => Promise<T>,
  signal: AbortSignal | undefined,
  firstMs: number,
  nextMs: number,
): Promise<T> {
  if (signal?.aborted) return Promise.reject(signal.reason as Error);
  // A timeout that restarts on each sign of progress and pauses while work is held: more than
  // the one timer of within(), so it rejects `stalled` here; within() adds the abort and the
  // cleanup (no timer is armed once the wait is over).
  let timer: ReturnType<typeof setTimeout> | undefined;
  let holding = 0;
  let over = false;
  let stall: () => void = () => undefined;
  const stalled = new Promise<never>((_, reject) => {
    stall = () => reject(new StoreTimeout());
  });
  const arm = (ms: number) => {
    clearTimeout(timer);
    timer = holding > 0 || over ? undefined : setTimeout(stall, Math.max(0, ms));
  };
  const watch: Watch = {
    alive: () => arm(nextMs),
    hold: (work) => {
      holding += 1;
      arm(0);
      const release = () => {
        holding -= 1;
        arm(nextMs);
      };
      work.then(release, release);
      return work;
    },
  };
  arm(firstMs);
  let value: Promise<T>;
  try {
    value = start(watch);
  } catch (error) {
    value = Promise.reject(error);
  }
  return within(Promise.race([value, stalled]), {
    signal,
    done: () => {
      over = true;
      clearTimeout(timer);
    },
  });
}

/**
 * The time one call may spend waiting on shared stores, across all its operations (the token
 * store's read, refresh lock, write, delete; the rate limiter's acquire): each one gets what the
 * earlier ones left, so a store that does not answer costs the call `tokenStoreTimeout` once,
 * not once per operation or per store ({@link callStoreBudget}).
 */
export class StoreBudget {
  #leftMs: number;

  constructor(ms: number) {
    this.#leftMs = ms;
  }

  /** Milliseconds left for store operations. */
  get leftMs(): number {
    return this.#leftMs;
  }

  /** Whether the store may still be asked in this call. */
  get usable(): boolean {
    return this.#leftMs > 0;
  }

  /** Spends `ms` waited on a store outside {@link spend} (the rate limiter's own wait on Redis). */
  charge(ms: number): void {
    if (ms > 0) this.#leftMs -= ms;
  }

  /** Runs `op` bounded by `signal` and what is left, and spends the time it took. */
  async spend<T>(op: Promise<T>, signal: AbortSignal | undefined): Promise<T> {
    const started = performance.now();
    try {
      return await bounded(op, signal, this.#leftMs);
    } catch (error) {
      // A timer may fire a fraction of a millisecond before the clock says the time is up: a timeout spends it all.
      if (error instanceof StoreTimeout) this.#leftMs = 0;
      throw error;
    } finally {
      this.#leftMs -= performance.now() - started;
    }
  }
}

const perCall = new WeakMap<AbortSignal, StoreBudget>();

/**
 * The store budget of the call behind `call` (its signal), made with `ms` on first use: the
 * token manager and the rate limiter of one call find the same one, so a call spends at most
 * one `tokenStoreTimeout` across every shared store it touches.
 */
export function callStoreBudget(call: AbortSignal, ms: number): StoreBudget {
  let budget = perCall.get(call);
  if (!budget) perCall.set(call, (budget = new StoreBudget(ms)));
  return budget;
}

/** Words for a store failure in a warning (never the error's text: a store may echo a secret). */
export function describeStoreFailure(error: unknown): string {
  return error instanceof StoreTimeout ? 'did not answer in time' : 'failed';
}
