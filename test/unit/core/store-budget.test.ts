/**
 * src/core/store-budget.ts: a wait on a shared store never outlives the call (its abort ends it
 * with the call's own reason) nor its time (a timeout the caller degrades on), and one call's
 * store operations draw on one budget, so a store that does not answer costs the call once.
 * Timeouts here are a few milliseconds; the assertions are on outcomes, not durations.
 */
import { describe, expect, it } from 'vitest';
import {
  bounded,
  callStoreBudget,
  describeStoreFailure,
  StoreBudget,
  watched,
} from '../../../src/core/store-budget.js';

const never = () => new Promise<never>(() => undefined);

/** What `promise` settles with, as a value (rejections included). */
async function outcome<T>(promise: Promise<T>): Promise<{ value?: T; error?: unknown }> {
  try {
    return { value: await promise };
  } catch (error) {
    return { error };
  }
}

describe('bounded', () => {
  it('settles like the value when it is in time', async () => {
    await expect(bounded(Promise.resolve('token'), undefined, 1000)).resolves.toBe('token');
    const failure = new Error('store failed');
    await expect(bounded(Promise.reject(failure), undefined, 1000)).rejects.toBe(failure);
  });

  it('rejects with a timeout the warning words as "did not answer in time" when the value is late', async () => {
    const { error } = await outcome(bounded(never(), undefined, 5));
    expect(describeStoreFailure(error)).toBe('did not answer in time');
    expect(describeStoreFailure(new Error('ECONNRESET'))).toBe('failed');
  });

  it("rejects with the call's abort reason, at once when already aborted", async () => {
    const call = new AbortController();
    const reason = new Error('caller gave up');
    const waiting = bounded(never(), call.signal, 60_000);
    call.abort(reason);
    await expect(waiting).rejects.toBe(reason);
    await expect(bounded(Promise.resolve(1), call.signal, 60_000)).rejects.toBe(reason);
  });

  it('a store that fails after the call was already over does not become an unhandled rejection', async () => {
    const unhandled: unknown[] = [];
    const note = (error: unknown) => unhandled.push(error);
    process.on('unhandledRejection', note);
    try {
      const late = new Promise<never>((_, reject) => setTimeout(() => reject(new Error('store failed late')), 1));
      await expect(bounded(late, AbortSignal.abort(new Error('call over')), 60_000)).rejects.toThrow('call over');
      await new Promise((r) => setTimeout(r, 20));
    } finally {
      process.off('unhandledRejection', note);
    }
    expect(unhandled).toEqual([]);
  });
});

describe('watched', () => {
  it('a sign of progress restarts the timeout: an operation that keeps showing it is not given up', async () => {
    const result = watched(
      async (watch) => {
        for (let i = 0; i < 5; i++) {
          await new Promise((r) => setTimeout(r, 10));
          watch.alive();
        }
        return 'refreshed by another process';
      },
      undefined,
      30,
      30,
    );
    await expect(result).resolves.toBe('refreshed by another process');
  });

  it('while work is held there is no timeout; after it, the next-sign timeout applies again', async () => {
    const held = watched(
      async (watch) => watch.hold(new Promise((r) => setTimeout(() => r('own token'), 40))),
      undefined,
      5,
      5,
    );
    await expect(held).resolves.toBe('own token');

    const stalled = watched(
      async (watch) => {
        await watch.hold(Promise.resolve());
        return never();
      },
      undefined,
      1000,
      5,
    );
    expect(describeStoreFailure((await outcome(stalled)).error)).toBe('did not answer in time');
  });

  it('an operation that throws synchronously rejects with its error', async () => {
    const failure = new Error('sync throw');
    await expect(
      watched(
        () => {
          throw failure;
        },
        undefined,
        1000,
        1000,
      ),
    ).rejects.toBe(failure);
  });
});

describe('callStoreBudget', () => {
  it('gives every store of one call the same budget, and another call its own', () => {
    const call = new AbortController().signal;
    const tokens = callStoreBudget(call, 1000);
    expect(callStoreBudget(call, 5000)).toBe(tokens);
    expect(callStoreBudget(new AbortController().signal, 1000)).not.toBe(tokens);
    expect(tokens.leftMs).toBe(1000);
    // The rate limiter's wait on Redis is charged to the same budget.
    tokens.charge(400);
    expect(callStoreBudget(call, 1000).leftMs).toBe(600);
  });
});

describe('StoreBudget', () => {
  it('one call pays for a store that does not answer once: the time spent is gone for its later operations', async () => {
    const budget = new StoreBudget(20);
    expect(budget.usable).toBe(true);
    expect(describeStoreFailure((await outcome(budget.spend(never(), undefined))).error)).toBe(
      'did not answer in time',
    );
    expect(budget.usable).toBe(false);
    expect(budget.leftMs).toBeLessThanOrEqual(0);
  });

  it('an operation in time leaves the rest for the next', async () => {
    const budget = new StoreBudget(60_000);
    await expect(budget.spend(Promise.resolve('ok'), undefined)).resolves.toBe('ok');
    expect(budget.usable).toBe(true);
    expect(budget.leftMs).toBeGreaterThan(0);
    expect(budget.leftMs).toBeLessThanOrEqual(60_000);
  });
});
