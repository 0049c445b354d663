/**
 * src/core/call/call-deadline.ts on its own: per-call option checks, the deadline on the real-time
 * clock (performance.now, driven here by a spy: no test waits).
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { CallDeadline } from '../../../../src/core/call/call-deadline.js';

afterEach(() => vi.restoreAllMocks());

describe('CallDeadline', () => {
  function clock(start: number) {
    let now = start;
    vi.spyOn(performance, 'now').mockImplementation(() => now);
    return (ms: number) => {
      now += ms;
    };
  }

  it('counts down on the real-time clock and expires at the deadline', () => {
    const advance = clock(1_000);
    const limits = new CallDeadline(undefined, 5_000);
    expect(limits.remaining()).toBe(5_000);
    expect(limits.expired).toBe(false);
    advance(4_999);
    expect(limits.remaining()).toBe(1);
    expect(limits.stopped).toBe(false);
    advance(1);
    expect(limits.expired).toBe(true);
    expect(limits.stopped).toBe(true);
  });

  it("is stopped, but not expired, when the caller's signal aborts", () => {
    clock(0);
    const controller = new AbortController();
    const limits = new CallDeadline(controller.signal, 5_000);
    controller.abort();
    expect(limits.stopped).toBe(true);
    expect(limits.expired).toBe(false);
    expect(limits.signal.aborted).toBe(true);
  });

  it('builds one signal on first use and reuses it', () => {
    clock(0);
    const limits = new CallDeadline(undefined, 5_000);
    expect(limits.signal).toBe(limits.signal);
    expect(limits.signal.aborted).toBe(false);
  });
});
