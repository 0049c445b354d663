/**
 * The in-process limiter's edge probe (src/core/pacing/edge-probe.ts, memory-limiter.ts) on a
 * fake clock, against a service modelled as the spec's: a sliding window of accepted arrivals,
 * `X-RateLimit-Reset` rounded up to whole seconds, a 429 not counted. Each call retries a 429
 * after its `Retry-After`, as the client does.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { MemoryRateLimiter } from '../../../../src/index.js';
import { EDGE_PROBE_SLOT } from '../../../../src/core/pacing/edge-probe.js';

beforeEach(() => {
  vi.useFakeTimers();
  // A first arrival 300 ms into a second: its reset lies 700 ms past the true edge.
  vi.setSystemTime(1_764_000_000_300);
});
afterEach(() => vi.useRealTimers());

const K = 'merchant';
const ONE_WAY_MS = 5;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * A service allowing `limit` per sliding `windowMs`, and `calls` calls through `l` against it.
 * `skewMs`: the client's wall clock minus the service's; given, answers carry the service's `Date`.
 */
async function burst(l: MemoryRateLimiter, calls: number, limit: number, windowMs: number, skewMs?: number) {
  const arrivals: number[] = [];
  const answers: { status: number; slot: string | undefined; call: number; sentAt: number; arrival: number }[] = [];
  const call = async (n: number): Promise<void> => {
    for (;;) {
      const slot = (await l.acquire(K, 'payment', { maxWaitMs: 600_000 })) ?? undefined;
      const sentAt = Date.now();
      await sleep(ONE_WAY_MS);
      const arrival = Date.now();
      while (arrivals.length > 0 && (arrivals[0] as number) <= arrival - windowMs) arrivals.shift();
      const allowed = arrivals.length < limit;
      if (allowed) arrivals.push(arrival);
      const freesAt = (arrivals[0] ?? arrival) + windowMs;
      const retryAfterMs = allowed ? undefined : Math.max(1, Math.ceil((freesAt - arrival) / 1000)) * 1000;
      const remaining = Math.max(0, limit - arrivals.length);
      await sleep(ONE_WAY_MS);
      const status = allowed ? 201 : 429;
      const clientNow = Date.now() + (skewMs ?? 0);
      l.observe(
        K,
        'payment',
        {
          status,
          limit,
          remaining,
          resetInMs: Math.ceil(freesAt / 1000) * 1000 - clientNow,
          retryAfterMs,
          elapsedMs: Date.now() - sentAt,
          dateInMs: skewMs === undefined ? undefined : Math.floor(arrival / 1000) * 1000 - clientNow,
        },
        slot,
      );
      answers.push({ status, slot, call: n, sentAt, arrival });
      if (allowed) return;
      await sleep(retryAfterMs!);
    }
  };
  const all = Promise.all(Array.from({ length: calls }, (_, n) => call(n)));
  await vi.advanceTimersByTimeAsync(120_000);
  await all;
  return answers;
}

describe('MemoryRateLimiter: the edge probe', () => {
  it('a whole-second window: one probe, at the first edge, accepted; no 429; every call answered once', async () => {
    const answers = await burst(new MemoryRateLimiter({ now: () => Date.now() }), 10, 2, 2000);
    expect(answers.filter((a) => a.slot === EDGE_PROBE_SLOT).map((a) => a.status)).toEqual([201]);
    expect(answers.filter((a) => a.status === 429)).toEqual([]);
    expect(new Set(answers.map((a) => a.call)).size).toBe(10);
    expect(answers.length).toBe(10);
  });

  it('a window of 2.5 s: the probe is refused, the burst meets exactly that one 429, and its call is created once, on its retry', async () => {
    const answers = await burst(new MemoryRateLimiter({ now: () => Date.now() }), 10, 2, 2500);
    const refused = answers.filter((a) => a.status === 429);
    expect(refused.map((a) => a.slot)).toEqual([EDGE_PROBE_SLOT]);
    // Every call created exactly once; the refused one on its retry.
    const created = answers.filter((a) => a.status === 201).map((a) => a.call);
    expect(created.sort((a, b) => a - b)).toEqual(Array.from({ length: 10 }, (_, n) => n));
    expect(created).toContain(refused[0]?.call);
  });

  it('the probe goes once per bucket: a second burst (warm) sends none', async () => {
    const l = new MemoryRateLimiter({ now: () => Date.now() });
    const first = await burst(l, 10, 2, 2500);
    await vi.advanceTimersByTimeAsync(10_000);
    const second = await burst(l, 10, 2, 2500);
    expect(first.filter((a) => a.slot === EDGE_PROBE_SLOT).length).toBe(1);
    expect(second.filter((a) => a.slot === EDGE_PROBE_SLOT || a.status === 429)).toEqual([]);
  });

  it.each([
    ['2.6 s ahead of', 2600],
    ['2.6 s behind', -2600],
  ])(
    "a process clock %s the service's: the probe goes at the first edge, from the answer's Date, accepted; no 429",
    async (_how, skewMs) => {
      const answers = await burst(new MemoryRateLimiter({ now: () => Date.now() }), 10, 2, 2000, skewMs);
      const probes = answers.filter((a) => a.slot === EDGE_PROBE_SLOT);
      expect(probes.map((a) => a.status)).toEqual([201]);
      expect(answers.filter((a) => a.status === 429)).toEqual([]);
      // Sent within a round trip of the lone request's edge (its arrival plus the window), not a second late.
      const edge = Math.min(...answers.map((a) => a.arrival)) + 2000;
      expect(probes[0]!.sentAt - edge).toBeGreaterThanOrEqual(0);
      expect(probes[0]!.sentAt - edge).toBeLessThan(50);
    },
  );

  it('a first edge 75 ms before its reset: the probe would gain under the minimum, none goes', async () => {
    vi.setSystemTime(1_764_000_000_920);
    const answers = await burst(new MemoryRateLimiter({ now: () => Date.now() }), 10, 2, 2000);
    expect(answers.filter((a) => a.slot === EDGE_PROBE_SLOT || a.status === 429)).toEqual([]);
  });
});
