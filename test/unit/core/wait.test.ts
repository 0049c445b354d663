/**
 * src/core/wait.ts: the SDK's one abort-aware wait. Whatever ends a wait (its value, its time,
 * its signal), no timer is left to keep the process alive and no listener stays on the caller's
 * signal (a merchant may reuse one signal for thousands of calls). Fake timers count what is
 * left; the assertions are on outcomes, never on durations.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { wait, within, type WaitEnd } from '../../../src/core/wait.js';

/** A signal whose listeners are counted. */
function countedSignal() {
  const controller = new AbortController();
  let listeners = 0;
  const add = controller.signal.addEventListener.bind(controller.signal);
  const remove = controller.signal.removeEventListener.bind(controller.signal);
  vi.spyOn(controller.signal, 'addEventListener').mockImplementation((...args: Parameters<typeof add>) => {
    listeners += 1;
    add(...args);
  });
  vi.spyOn(controller.signal, 'removeEventListener').mockImplementation((...args: Parameters<typeof remove>) => {
    listeners -= 1;
    remove(...args);
  });
  return { controller, signal: controller.signal, listeners: () => listeners };
}

afterEach(() => {
  vi.useRealTimers();
  vi.restoreAllMocks();
});

describe('wait', () => {
  it('resolves after the delay, leaving no listener on the signal', async () => {
    vi.useFakeTimers();
    const { signal, listeners } = countedSignal();
    const waiting = wait(1000, signal);
    expect(listeners()).toBe(1);
    await vi.advanceTimersByTimeAsync(1000);
    await expect(waiting).resolves.toBeUndefined();
    expect(listeners()).toBe(0);
  });

  it("rejects with the signal's reason on abort and leaves no timer to keep the process alive", async () => {
    vi.useFakeTimers();
    const { controller, signal, listeners } = countedSignal();
    const waiting = wait(60_000, signal);
    expect(vi.getTimerCount()).toBe(1);
    const reason = new Error('call cancelled');
    controller.abort(reason);
    await expect(waiting).rejects.toBe(reason);
    expect(vi.getTimerCount()).toBe(0);
    expect(listeners()).toBe(0);
  });

  it('rejects at once for a signal already aborted, starting no timer', async () => {
    vi.useFakeTimers();
    const reason = new Error('already over');
    const waiting = wait(60_000, AbortSignal.abort(reason));
    expect(vi.getTimerCount()).toBe(0);
    await expect(waiting).rejects.toBe(reason);
  });
});

describe('within', () => {
  it('settles like the value in time, clearing the timer and the listener', async () => {
    vi.useFakeTimers();
    const { signal, listeners } = countedSignal();
    await expect(within(Promise.resolve('token'), { signal, ms: 1000, onTimeout: () => 'late' })).resolves.toBe(
      'token',
    );
    const failure = new Error('store failed');
    await expect(within(Promise.reject(failure), { signal, ms: 1000, onTimeout: () => 'late' })).rejects.toBe(failure);
    expect(vi.getTimerCount()).toBe(0);
    expect(listeners()).toBe(0);
  });

  it('comes to what onTimeout returns or throws when the value is late', async () => {
    vi.useFakeTimers();
    const late = new Promise<string>(() => undefined);
    const marker = within(late, { ms: 5, onTimeout: () => 'timed out' as const });
    const refusal = within(late, {
      ms: 5,
      onTimeout: () => {
        throw new Error('too slow');
      },
    });
    const caught = refusal.catch((error: unknown) => error);
    await vi.advanceTimersByTimeAsync(5);
    await expect(marker).resolves.toBe('timed out');
    expect(await caught).toEqual(new Error('too slow'));
  });

  it('tells done how it ended, once, before the caller resumes', async () => {
    vi.useFakeTimers();
    const ends: WaitEnd[] = [];
    const done = (end: WaitEnd) => ends.push(end);
    await within(Promise.resolve(1), { done });
    const timing = within(new Promise(() => undefined), { ms: 1, onTimeout: () => 0, done });
    await vi.advanceTimersByTimeAsync(1);
    await timing;
    const controller = new AbortController();
    const aborting = within(new Promise(() => undefined), { signal: controller.signal, done });
    controller.abort(new Error('gone'));
    await aborting.catch(() => undefined);
    expect(ends).toEqual(['settled', 'timeout', 'aborted']);
  });

  it('a Settle woken synchronously wins over an abort that follows in the same tick', async () => {
    const controller = new AbortController();
    let grant: (slot: string) => void = () => undefined;
    const waiting = within<string>((resolve) => (grant = resolve), { signal: controller.signal });
    grant('slot-1');
    controller.abort(new Error('too late'));
    await expect(waiting).resolves.toBe('slot-1');
  });

  it('a Settle that throws rejects with its error', async () => {
    const failure = new Error('could not enqueue');
    await expect(
      within(() => {
        throw failure;
      }, {}),
    ).rejects.toBe(failure);
  });
});

describe('wait as the backoff sleep', () => {
  it('resolves after the delay when nothing aborts it', async () => {
    await expect(wait(0)).resolves.toBeUndefined();
  });

  it("rejects at once with the signal's reason when already aborted", async () => {
    const reason = new Error('stop');
    await expect(wait(60_000, AbortSignal.abort(reason))).rejects.toBe(reason);
  });

  it('rejects as soon as the signal aborts, leaving no timer behind', async () => {
    const controller = new AbortController();
    const waiting = wait(60_000, controller.signal);
    const reason = new Error('cancelled');
    controller.abort(reason);
    await expect(waiting).rejects.toBe(reason);
  });
});
