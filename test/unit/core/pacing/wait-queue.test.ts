/** src/core/pacing/wait-queue.ts: the first-come-first-served queue of calls waiting for a slot, on fake timers. */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { WaitQueue } from '../../../../src/core/pacing/wait-queue.js';

afterEach(() => vi.useRealTimers());

/** A limiter clock reading. */
const NOW = 5_000_000;

describe('WaitQueue', () => {
  const timeoutError = () => new Error('no slot in time');

  it('finds the longest-waiting call that can absorb a 429 (mayBeRefused, true unless said), for a slot that may be refused', () => {
    const queue = new WaitQueue();
    for (const mayBeRefused of [false, false, undefined, true])
      queue.add({ maxWaitMs: 60_000, mayBeRefused }, NOW, timeoutError).catch(() => undefined);
    expect(queue.first()?.mayBeRefused).toBe(false);
    expect(queue.firstThatMayBeRefused()).toBe(queue.drain()[2]);
    expect(queue.firstThatMayBeRefused()).toBeUndefined();
  });

  it('hands back the calls whose store time is spent, keeping the others and the unbounded ones', () => {
    const queue = new WaitQueue();
    const spent: number[] = [];
    const storeBudget = { leftMs: () => 0, spend: (ms: number) => void spent.push(ms) };
    for (const storeMs of [300, 1000, undefined])
      queue.add({ maxWaitMs: 60_000, storeBudget }, NOW, timeoutError, storeMs).catch(() => undefined);
    expect(queue.leastStoreLeft()).toBe(300);
    expect(queue.spendStore(100)).toEqual([]);
    expect(queue.leastStoreLeft()).toBe(200);
    expect(queue.spendStore(200).map((w) => w.storeLeftMs)).toEqual([0]);
    expect(queue.length).toBe(2);
    expect(queue.leastStoreLeft()).toBe(700);
    expect(queue.spendStore(700)).toHaveLength(1);
    expect(queue.leastStoreLeft()).toBe(Number.POSITIVE_INFINITY);
    // Each call's budget was charged with what it waited: 3 calls × 100, 3 × 200, 2 × 700.
    expect(spent).toEqual([100, 100, 100, 200, 200, 200, 700, 700]);
    for (const w of queue.drain()) w.grant();
  });

  it('serves waiting calls first come first served, each with the slot name it was granted', async () => {
    vi.useFakeTimers();
    const queue = new WaitQueue();
    const calls = [
      queue.add({ maxWaitMs: 60_000 }, NOW, timeoutError),
      queue.add({ maxWaitMs: 60_000 }, NOW, timeoutError),
    ];
    expect(queue.length).toBe(2);
    queue.first()?.grant('slot-a');
    expect(queue.length).toBe(1); // gone at once: the pump that granted it sees the next waiter
    queue.first()?.grant();
    await expect(Promise.all(calls)).resolves.toEqual(['slot-a', undefined]);
    expect(queue.length).toBe(0);
    expect(vi.getTimerCount()).toBe(0);
  });

  it("rejects a call with onTimeout's error once its maxWaitMs pass, and not before", async () => {
    vi.useFakeTimers();
    const queue = new WaitQueue();
    const onTimeout = vi.fn(timeoutError);
    let outcome: unknown;
    queue.add({ maxWaitMs: 5000 }, NOW, onTimeout).catch((error: unknown) => (outcome = error));
    await vi.advanceTimersByTimeAsync(4999);
    expect(outcome).toBeUndefined();
    expect(queue.length).toBe(1);
    await vi.advanceTimersByTimeAsync(1);
    expect(outcome).toEqual(new Error('no slot in time'));
    expect(onTimeout).toHaveBeenCalledTimes(1);
    expect(queue.length).toBe(0);
  });

  it.each([0, 0.2, -5])(
    'gives a call with maxWaitMs %d a timer of 1 ms, not an immediate or negative one',
    async (maxWaitMs) => {
      vi.useFakeTimers();
      const queue = new WaitQueue();
      let outcome: unknown;
      queue.add({ maxWaitMs }, NOW, timeoutError).catch((error: unknown) => (outcome = error));
      await vi.advanceTimersByTimeAsync(0);
      expect(outcome).toBeUndefined();
      expect(queue.length).toBe(1);
      await vi.advanceTimersByTimeAsync(1);
      expect(outcome).toEqual(new Error('no slot in time'));
      expect(queue.length).toBe(0);
    },
  );

  it("ends an aborted call's wait with the signal's reason and leaves the others waiting", async () => {
    vi.useFakeTimers();
    const queue = new WaitQueue();
    const controller = new AbortController();
    const aborted = queue.add({ maxWaitMs: 60_000, signal: controller.signal }, NOW, timeoutError);
    const other = queue.add({ maxWaitMs: 60_000 }, NOW, timeoutError);
    const reason = new Error('merchant cancelled');
    controller.abort(reason);
    await expect(aborted).rejects.toBe(reason);
    expect(queue.length).toBe(1);
    queue.first()?.grant('slot-b');
    await expect(other).resolves.toBe('slot-b');
  });

  it('refuses a call whose signal already aborted without queueing it or calling onTimeout', async () => {
    vi.useFakeTimers();
    const queue = new WaitQueue();
    const onTimeout = vi.fn(timeoutError);
    const reason = new Error('already over');
    await expect(queue.add({ maxWaitMs: 60_000, signal: AbortSignal.abort(reason) }, NOW, onTimeout)).rejects.toBe(
      reason,
    );
    expect(queue.length).toBe(0);
    expect(vi.getTimerCount()).toBe(0);
    expect(onTimeout).not.toHaveBeenCalled();
  });

  it('does not take a granted slot back when the signal aborts right after the grant', async () => {
    vi.useFakeTimers();
    const queue = new WaitQueue();
    const controller = new AbortController();
    const waiting = queue.add({ maxWaitMs: 60_000, signal: controller.signal }, NOW, timeoutError);
    queue.first()?.grant('slot-c');
    controller.abort(new Error('too late'));
    await expect(waiting).resolves.toBe('slot-c');
  });

  it('ignores a grant to a call that already gave up', async () => {
    vi.useFakeTimers();
    const queue = new WaitQueue();
    const controller = new AbortController();
    const waiting = queue.add({ maxWaitMs: 60_000, signal: controller.signal }, NOW, timeoutError);
    const stale = queue.first();
    const reason = new Error('gave up');
    controller.abort(reason);
    stale?.grant('slot-d');
    await expect(waiting).rejects.toBe(reason);
  });

  it('knows the latest deadline of the waiting calls (0 when none waits)', () => {
    vi.useFakeTimers();
    const queue = new WaitQueue();
    expect(queue.latestDeadline()).toBe(0);
    void queue.add({ maxWaitMs: 30_000 }, NOW, timeoutError).catch(() => undefined);
    void queue.add({ maxWaitMs: 90_000 }, NOW + 1000, timeoutError).catch(() => undefined);
    void queue.add({ maxWaitMs: 10_000 }, NOW + 2000, timeoutError).catch(() => undefined);
    expect(queue.latestDeadline()).toBe(NOW + 91_000);
    for (const waiter of queue.drain()) waiter.fail(new Error('stop'));
  });

  it('drains every waiting call in order, emptying the queue; failing them clears their timers', async () => {
    vi.useFakeTimers();
    const queue = new WaitQueue();
    const calls = [1, 2, 3].map(() => queue.add({ maxWaitMs: 60_000 }, NOW, timeoutError));
    const drained = queue.drain();
    expect(drained).toHaveLength(3);
    expect(queue.length).toBe(0);
    expect(queue.first()).toBeUndefined();
    drained.forEach((waiter, i) => waiter.fail(new Error(`limiter gave up ${i}`)));
    const outcomes = await Promise.allSettled(calls);
    expect(outcomes.map((o) => (o.status === 'rejected' ? (o.reason as Error).message : 'granted'))).toEqual([
      'limiter gave up 0',
      'limiter gave up 1',
      'limiter gave up 2',
    ]);
    expect(vi.getTimerCount()).toBe(0);
  });
});
