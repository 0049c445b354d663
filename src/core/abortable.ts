/**
 * Waiting on something slow (a shared store) without outliving the call: settles with the
 * value, the call's abort, or a timeout marker the caller degrades on.
 *
 * @module
 */

const STORE_TIMEOUT = Symbol('store timeout');

/**
 * Settles like `value`, or rejects: with `signal`'s reason when it aborts (the call is over),
 * or with a timeout marker after `ms` (the store is too slow; the caller degrades).
 */
export function bounded<T>(value: Promise<T>, signal: AbortSignal | undefined, ms: number): Promise<T> {
  if (signal?.aborted) return Promise.reject(signal.reason as Error);
  return new Promise<T>((resolve, reject) => {
    const done = () => {
      clearTimeout(timer);
      signal?.removeEventListener('abort', onAbort);
    };
    const onAbort = () => {
      done();
      reject(signal?.reason as Error);
    };
    const timer = setTimeout(() => {
      done();
      reject(STORE_TIMEOUT);
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
    value.then(
      (result) => {
        done();
        resolve(result);
      },
      (error: unknown) => {
        done();
        reject(error as Error);
      },
    );
  });
}

/** Words for a store failure in a warning (never the error's text: a store may echo a secret). */
export function describeStoreFailure(error: unknown): string {
  return error === STORE_TIMEOUT ? 'did not answer in time' : 'failed';
}
