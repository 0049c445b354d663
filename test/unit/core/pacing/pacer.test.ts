/**
 * src/core/pacing/pacer.ts: what the transport does around each attempt. It takes a slot of the
 * operation's bucket (nothing is sent before), then reports the answer's rate-limit headers and
 * Retry-After back to the limiter. Fake timers drive the waits; a recording limiter shows what
 * the limiter is told, and the in-process MemoryRateLimiter shows the waits it leads to.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { RateLimitError } from '../../../../src/core/errors/service.js';
import {
  type AcquireOptions,
  CLIENT_WARN,
  type RateBucket,
  type RateLimiter,
  type RateLimitObservation,
} from '../../../../src/core/pacing/limiter-contract.js';
import { MemoryRateLimiter } from '../../../../src/core/pacing/memory-limiter.js';
import { type PacedAnswer, Pacer } from '../../../../src/core/pacing/pacer.js';
import { readAnswerTiming } from '../../../../src/core/pacing/rate-limit-headers.js';
import type { Operation } from '../../../../src/core/call/retry-policy.js';

const START = Date.parse('2026-03-01T10:00:00.000Z');

beforeEach(() => {
  vi.useFakeTimers();
  vi.setSystemTime(START);
});
afterEach(() => vi.useRealTimers());

const KEY = 'merchant-hash';

/** A limiter that grants at once (with `slot` as the slot's name) and records what it is told. */
function recordingLimiter(slot?: string) {
  const acquired: { key: string; bucket: RateBucket; options: AcquireOptions }[] = [];
  const observed: { key: string; bucket: RateBucket; observation: RateLimitObservation; slot: string | undefined }[] =
    [];
  const limiter: RateLimiter = {
    acquire: (key, bucket, options) => {
      acquired.push({ key, bucket, options });
      return Promise.resolve(slot);
    },
    observe: (key, bucket, observation, s) => void observed.push({ key, bucket, observation, slot: s }),
  };
  return { limiter, acquired, observed };
}

function pacerOver(limiter: RateLimiter, keyOf = vi.fn(() => Promise.resolve(KEY))) {
  return { pacer: new Pacer(limiter, keyOf), keyOf };
}

/** An answer as the attempt hands it to the pacer: its status, its headers read once on the clock. */
function response(status: number, headers: Record<string, string> = {}): PacedAnswer {
  return { status, timing: readAnswerTiming(new Headers(headers), Date.now()) };
}

describe('Pacer.acquire', () => {
  it.each<[Operation, RateBucket]>([
    ['payment.create', 'payment'],
    ['withdraw', 'withdraw'],
    ['withdraw.recover', 'withdraw'],
    ['status', 'other'],
  ])(
    "takes a slot of a %s attempt in the %s bucket, with the call's signal and time left",
    async (operation, bucket) => {
      const { limiter, acquired } = recordingLimiter();
      const { pacer } = pacerOver(limiter);
      const signal = new AbortController().signal;
      await pacer.acquire(operation, signal, 12_345);
      expect(acquired).toEqual([{ key: KEY, bucket, options: { signal, maxWaitMs: 12_345, mayBeRefused: true } }]);
    },
  );

  it('says when the attempt cannot absorb a 429 (its last), so the limiter gives it no slot that may be refused', async () => {
    const { limiter, acquired } = recordingLimiter();
    const { pacer } = pacerOver(limiter);
    await pacer.acquire('payment.create', undefined, 1000, undefined, false);
    expect(acquired[0]?.options.mayBeRefused).toBe(false);
  });

  it('leaves the token endpoint to the token limiter: no slot, no key, nothing to report', async () => {
    const { limiter, acquired } = recordingLimiter();
    const { pacer, keyOf } = pacerOver(limiter);
    await expect(pacer.acquire('token', undefined, 10_000)).resolves.toBeUndefined();
    expect(acquired).toEqual([]);
    expect(keyOf).not.toHaveBeenCalled();
  });

  it("works out the merchant's key once, however many attempts it paces", async () => {
    const { limiter, acquired } = recordingLimiter();
    const { pacer, keyOf } = pacerOver(limiter);
    for (const operation of ['status', 'withdraw', 'payment.create'] as const)
      await pacer.acquire(operation, undefined, 1000);
    expect(keyOf).toHaveBeenCalledTimes(1);
    expect(acquired.map((a) => a.key)).toEqual([KEY, KEY, KEY]);
  });

  it('asks for the key again after working it out failed, instead of keeping the failure', async () => {
    const { limiter } = recordingLimiter();
    const keyOf = vi.fn<() => Promise<string>>().mockRejectedValueOnce(new Error('hash failed')).mockResolvedValue(KEY);
    const { pacer } = pacerOver(limiter, keyOf);
    await expect(pacer.acquire('status', undefined, 1000)).rejects.toThrow('hash failed');
    await expect(pacer.acquire('status', undefined, 1000)).resolves.toBeTypeOf('function');
    expect(keyOf).toHaveBeenCalledTimes(2);
  });

  it("fails with the limiter's refusal, handing back nothing to report", async () => {
    const refusal = new RateLimitError('RATE_LIMITED: no slot', {
      code: 'RATE_LIMITED',
      retryable: true,
      retryAfter: 5,
    });
    const observe = vi.fn();
    const { pacer } = pacerOver({ acquire: () => Promise.reject(refusal), observe });
    await expect(pacer.acquire('withdraw', undefined, 1000)).rejects.toBe(refusal);
    expect(observe).not.toHaveBeenCalled();
  });
});

describe('the report of an attempt', () => {
  const RESET = START / 1000 + 30;

  it("hands the limiter the answer's status and X-RateLimit headers, the reset as both a time and a wait on the client's clock", async () => {
    const { limiter, observed } = recordingLimiter();
    const { pacer } = pacerOver(limiter);
    const report = await pacer.acquire('payment.create', undefined, 10_000);
    report?.(
      response(201, { 'X-RateLimit-Limit': '100', 'X-RateLimit-Remaining': '42', 'X-RateLimit-Reset': String(RESET) }),
    );
    expect(observed).toEqual([
      {
        key: KEY,
        bucket: 'payment',
        slot: undefined,
        observation: {
          status: 201,
          limit: 100,
          remaining: 42,
          resetAt: RESET * 1000,
          resetInMs: 30_000,
          retryAfterMs: undefined,
          elapsedMs: 0,
        },
      },
    ]);
  });

  it("measures the reset wait from the client's clock when the answer arrives, not when the slot was taken", async () => {
    const { limiter, observed } = recordingLimiter();
    const { pacer } = pacerOver(limiter);
    const report = await pacer.acquire('status', undefined, 10_000);
    await vi.advanceTimersByTimeAsync(4000);
    report?.(response(200, { 'X-RateLimit-Remaining': '1', 'X-RateLimit-Reset': String(RESET) }));
    expect(observed[0]?.observation).toMatchObject({ resetInMs: 26_000, elapsedMs: 4000 });
  });

  it.each([
    ['seconds', '7', 7000],
    ['fractional seconds', '1.5', 1500],
    ['an HTTP date', 'Sun, 01 Mar 2026 10:00:05 GMT', 5000],
    ['an HTTP date in the past (no negative wait)', 'Sun, 01 Mar 2026 09:59:00 GMT', 0],
  ])("reads a 429's Retry-After given as %s", async (_what, value, retryAfterMs) => {
    const { limiter, observed } = recordingLimiter();
    const { pacer } = pacerOver(limiter);
    const report = await pacer.acquire('withdraw', undefined, 10_000);
    report?.(response(429, { 'Retry-After': value }));
    expect(observed[0]?.observation).toMatchObject({ status: 429, retryAfterMs });
  });

  it.each(['-5', 'soon', '', '1e3'])(
    'hands on no wait for a malformed Retry-After %j, and still the status',
    async (value) => {
      const { limiter, observed } = recordingLimiter();
      const { pacer } = pacerOver(limiter);
      const report = await pacer.acquire('withdraw', undefined, 10_000);
      report?.(response(429, { 'Retry-After': value }));
      expect(observed[0]?.observation).toMatchObject({ status: 429, retryAfterMs: undefined });
    },
  );

  it('hands on an answer without rate-limit headers (a proxy error page) as its status alone', async () => {
    const { limiter, observed } = recordingLimiter();
    const { pacer } = pacerOver(limiter);
    const report = await pacer.acquire('status', undefined, 10_000);
    report?.(response(502));
    expect(observed[0]?.observation).toEqual({
      status: 502,
      limit: undefined,
      remaining: undefined,
      resetInMs: undefined,
      resetAt: undefined,
      retryAfterMs: undefined,
      elapsedMs: 0,
    });
  });

  it('reports an attempt that got no answer (timeout, connection failure) with its elapsed time only', async () => {
    const { limiter, observed } = recordingLimiter();
    const { pacer } = pacerOver(limiter);
    const report = await pacer.acquire('withdraw', undefined, 10_000);
    await vi.advanceTimersByTimeAsync(2500);
    report?.(undefined);
    expect(observed).toEqual([{ key: KEY, bucket: 'withdraw', slot: undefined, observation: { elapsedMs: 2500 } }]);
  });

  it('hands the slot name the limiter gave back with the answer (a shared limiter releases that slot)', async () => {
    const { limiter, observed } = recordingLimiter('slot-17');
    const { pacer } = pacerOver(limiter);
    const report = await pacer.acquire('payment.create', undefined, 10_000);
    report?.(response(201));
    expect(observed[0]?.slot).toBe('slot-17');
  });

  it('does not fail the call it paced when the limiter throws while learning', async () => {
    const limiter: RateLimiter = {
      acquire: () => Promise.resolve(),
      observe: () => {
        throw new Error('limiter store down');
      },
    };
    const { pacer } = pacerOver(limiter);
    const report = await pacer.acquire('status', undefined, 10_000);
    expect(() => report?.(response(200))).not.toThrow();
    expect(() => report?.(undefined)).not.toThrow();
  });
});

describe("the client's warnings", () => {
  it('reach a limiter that takes them (one with no logger of its own)', () => {
    const lines: string[] = [];
    let taken: ((message: string) => void) | undefined;
    const limiter = {
      ...recordingLimiter().limiter,
      [CLIENT_WARN]: (warn: (message: string) => void) => (taken = warn),
    };
    new Pacer(
      limiter,
      () => Promise.resolve(KEY),
      (message) => lines.push(message),
    );
    taken?.('shared limiter unreachable: pacing locally');
    expect(lines).toEqual(['shared limiter unreachable: pacing locally']);
  });

  it('are not asked for when the client has none to give', () => {
    const take = vi.fn();
    const limiter = { ...recordingLimiter().limiter, [CLIENT_WARN]: take };
    new Pacer(limiter, () => Promise.resolve(KEY));
    expect(take).not.toHaveBeenCalled();
  });
});

describe('waiting for a slot (MemoryRateLimiter on fake timers)', () => {
  /** A limiter that has learned the withdraw bucket allows one request a 60 s window, and used it. */
  async function fullWithdrawBucket() {
    const limiter = new MemoryRateLimiter({ now: () => Date.now() });
    limiter.observe(KEY, 'withdraw', { status: 200, limit: 1, elapsedMs: 0 });
    const { pacer } = pacerOver(limiter);
    const first = await pacer.acquire('withdraw', undefined, 120_000);
    first?.(response(200));
    return pacer;
  }

  it('holds the next attempt until the slot frees, then hands a report', async () => {
    const pacer = await fullWithdrawBucket();
    let report: unknown;
    void pacer.acquire('withdraw', undefined, 120_000).then((r) => (report = r));
    await vi.advanceTimersByTimeAsync(59_999);
    expect(report).toBeUndefined();
    await vi.advanceTimersByTimeAsync(1);
    expect(report).toBeTypeOf('function');
  });

  it("ends the wait with the signal's reason when the caller aborts, taking no slot", async () => {
    const pacer = await fullWithdrawBucket();
    const controller = new AbortController();
    const waiting = pacer.acquire('withdraw', controller.signal, 120_000);
    await vi.advanceTimersByTimeAsync(1000);
    const reason = new Error('merchant cancelled');
    controller.abort(reason);
    await expect(waiting).rejects.toBe(reason);
    // The slot it did not take is still there for the next call when the window frees.
    let next: unknown;
    void pacer.acquire('withdraw', undefined, 120_000).then((r) => (next = r));
    await vi.advanceTimersByTimeAsync(59_000);
    expect(next).toBeTypeOf('function');
  });

  it('fails at once with a retryable RATE_LIMITED when no slot can free within the time the call has left', async () => {
    const pacer = await fullWithdrawBucket();
    const error = await pacer.acquire('withdraw', undefined, 5000).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(RateLimitError);
    expect(error).toMatchObject({ code: 'RATE_LIMITED', retryable: true, retryAfter: 60 });
  });

  it("holds the bucket for the Retry-After of a 429 it reported, read from the answer's header", async () => {
    const limiter = new MemoryRateLimiter({ now: () => Date.now() });
    const { pacer } = pacerOver(limiter);
    const first = await pacer.acquire('status', undefined, 120_000);
    first?.(response(429, { 'X-RateLimit-Limit': '100', 'X-RateLimit-Remaining': '0', 'Retry-After': '3' }));
    let next: unknown;
    void pacer.acquire('status', undefined, 120_000).then((r) => (next = r));
    await vi.advanceTimersByTimeAsync(2999);
    expect(next).toBeUndefined();
    await vi.advanceTimersByTimeAsync(1);
    expect(next).toBeTypeOf('function');
  });
});
