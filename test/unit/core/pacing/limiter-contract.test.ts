/**
 * src/core/pacing/limiter-contract.ts: what every RateLimiter shares. Which bucket a request
 * counts in, the published limits, the error of a call that found no slot, and the hook that
 * hands a limiter the client's warnings.
 */
import { describe, expect, it, vi } from 'vitest';
import { RateLimitError } from '../../../../src/core/errors/service.js';
import { BucketModel } from '../../../../src/core/pacing/bucket-model.js';
import {
  bucketOf,
  CLIENT_WARN,
  handClientWarn,
  pacingError,
  PUBLISHED_LIMITS,
  PUBLISHED_WINDOW_MS,
  type RateBucket,
  type RateLimiter,
} from '../../../../src/core/pacing/limiter-contract.js';
import type { Operation } from '../../../../src/core/call/retry-policy.js';

describe('bucketOf', () => {
  it.each<[Operation, RateBucket]>([
    ['token', 'token'],
    ['payment.create', 'payment'],
    ['withdraw', 'withdraw'],
    ['withdraw.recover', 'withdraw'],
    ['status', 'other'],
  ])('counts %s requests in the %s bucket, as the spec limits its endpoints', (operation, bucket) => {
    expect(bucketOf(operation)).toBe(bucket);
  });
});

describe('the published limits', () => {
  it('are the spec table: 5 token, 100 payment, 50 withdraw and 100 other requests per 60 s window', () => {
    expect(PUBLISHED_LIMITS).toEqual({ token: 5, payment: 100, withdraw: 50, other: 100 });
    expect(PUBLISHED_WINDOW_MS).toBe(60_000);
  });

  it('cannot be changed by a merchant at run time', () => {
    expect(Object.isFrozen(PUBLISHED_LIMITS)).toBe(true);
  });

  it.each<RateBucket>(['token', 'payment', 'withdraw', 'other'])(
    'start a cold %s bucket at its published limit and window, paced and not blocked',
    (bucket) => {
      const model = new BucketModel(bucket);
      expect(model).toMatchObject({
        bucket,
        limit: PUBLISHED_LIMITS[bucket],
        windowMs: PUBLISHED_WINDOW_MS,
        blockedUntil: 0,
        unpaced: false,
        windowKnown: false,
      });
    },
  );
});

describe('pacingError', () => {
  it.each([
    [0, 1],
    [1, 1],
    [999, 1],
    [1000, 1],
    [1001, 2],
    [59_500, 60],
  ])('after a wait of %d ms tells the caller to retry in %d s (whole seconds, at least 1)', (waitMs, seconds) => {
    expect(pacingError('withdraw', 50, 60_000, waitMs).retryAfter).toBe(seconds);
  });

  it('is a retryable RATE_LIMITED RateLimitError saying the bucket, its limit and window, and that nothing was sent', () => {
    const error = pacingError('withdraw', 50, 60_000, 12_300);
    expect(error).toBeInstanceOf(RateLimitError);
    expect(error).toMatchObject({ code: 'RATE_LIMITED', retryable: true, retryAfter: 13 });
    expect(error.message).toMatch(/^RATE_LIMITED: /);
    expect(error.message).toContain('50 withdraw requests per 60 s');
    expect(error.message).toContain('about 13 s');
    expect(error.message).toContain('Nothing was sent');
  });

  it('states a measured window in whole seconds', () => {
    expect(pacingError('other', 3, 2010, 500).message).toContain('3 other requests per 2 s');
  });

  it('names the pacing state shared in Redis, not the service, when that is where the limit came from', () => {
    const message = pacingError('payment', 1, 3_600_000, 7_200_000, 'redis').message;
    expect(message).toContain('the pacing state shared in Redis allows 1 payment requests per 3600 s');
    expect(message).not.toContain('the service allows');
  });
});
describe('handClientWarn', () => {
  const plain: RateLimiter = { acquire: async () => undefined, observe: () => undefined };

  it("hands the client's warn to a limiter that takes one, called on the limiter", () => {
    const lines: string[] = [];
    const take = vi.fn<(warn: (message: string) => void) => void>();
    const limiter = { ...plain, [CLIENT_WARN]: take };
    handClientWarn(limiter, (message) => lines.push(message));
    expect(take).toHaveBeenCalledTimes(1);
    expect(take.mock.contexts[0]).toBe(limiter);
    take.mock.calls[0]?.[0]('redis is slow');
    expect(lines).toEqual(['redis is slow']);
  });

  it('leaves a limiter without the hook (or with a non-function under it) alone', () => {
    const warn = vi.fn();
    expect(() => handClientWarn(plain, warn)).not.toThrow();
    const odd = { ...plain, [CLIENT_WARN]: 'not a function' };
    expect(() => handClientWarn(odd, warn)).not.toThrow();
    expect(odd[CLIENT_WARN]).toBe('not a function');
    expect(warn).not.toHaveBeenCalled();
  });

  it('finds the hook by a registered symbol, so a limiter from another copy of the SDK (ESM beside CJS) still gets it', () => {
    const take = vi.fn();
    handClientWarn({ ...plain, [Symbol.for('myr-gateway.rate-limiter.client-warn')]: take }, () => undefined);
    expect(take).toHaveBeenCalledTimes(1);
  });
});
