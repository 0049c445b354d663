/**
 * src/redis/failover.ts: a store write retried through a failover (while Redis does not answer,
 * until its claim lapses), and the claim expiries that bound it.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { RedisStoreError } from '../../../src/redis/errors.js';
import { ClaimExpiries, retryDelayMs, untilAnswered } from '../../../src/redis/failover.js';

afterEach(() => {
  vi.useRealTimers();
});

const down = () => new RedisStoreError('Redis did not answer EVALSHA within 300 ms', 'timeout');

describe('untilAnswered', () => {
  it('retries while Redis does not answer and answers with the first reply', async () => {
    let calls = 0;
    const attempt = () => (++calls < 4 ? Promise.reject(down()) : Promise.resolve('recorded'));
    await expect(untilAnswered(attempt, () => Date.now() + 60_000)).resolves.toBe('recorded');
    expect(calls).toBe(4);
  });

  it('throws the last failure once the next retry would come after the deadline', async () => {
    let calls = 0;
    const attempt = () => {
      calls += 1;
      return Promise.reject(down());
    };
    // Room for the first wait, not for the second.
    const deadline = Date.now() + retryDelayMs(0) + retryDelayMs(1) - 1;
    await expect(untilAnswered(attempt, () => deadline)).rejects.toBeInstanceOf(RedisStoreError);
    expect(calls).toBe(2);
  });

  it('does not retry what is not Redis failing to answer', async () => {
    let calls = 0;
    const attempt = () => {
      calls += 1;
      return Promise.reject(new TypeError('bad reply'));
    };
    await expect(untilAnswered(attempt, () => Date.now() + 60_000)).rejects.toBeInstanceOf(TypeError);
    expect(calls).toBe(1);
  });

  it('reads the deadline again before each retry (a renewal moves it)', async () => {
    let deadline = Date.now() + 150;
    let calls = 0;
    const attempt = () => {
      calls += 1;
      if (calls === 2) deadline = Date.now() + 60_000;
      return calls < 4 ? Promise.reject(down()) : Promise.resolve('recorded');
    };
    await expect(untilAnswered(attempt, () => deadline)).resolves.toBe('recorded');
  });
});

describe('retryDelayMs', () => {
  it('starts short and waits at most a second between attempts', () => {
    expect([0, 1, 2, 3, 4, 50].map(retryDelayMs)).toEqual([100, 200, 400, 800, 1000, 1000]);
  });
});

describe('ClaimExpiries', () => {
  it('knows when a claim taken or renewed lapses, and falls back to the TTL from now once forgotten', () => {
    vi.useFakeTimers({ now: 1_000_000 });
    const expiries = new ClaimExpiries();
    expiries.held('t1', 4000);
    vi.advanceTimersByTime(3000);
    expect(expiries.expiresAt('t1', 4000)).toBe(1_004_000);
    expiries.held('t1', 4000);
    expect(expiries.expiresAt('t1', 4000)).toBe(1_007_000);
    expiries.forget('t1');
    expect(expiries.expiresAt('t1', 4000)).toBe(1_007_000);
    vi.advanceTimersByTime(1000);
    expect(expiries.expiresAt('t1', 4000)).toBe(1_008_000);
  });

  it('keeps the payment lock a claim took through its renewals, and forgets it with the claim', () => {
    const expiries = new ClaimExpiries();
    expiries.held('t1', 4000, 'p:webhook-lock:PAY_1');
    expiries.held('t2', 4000);
    expiries.held('t1', 4000); // a renewal: given no lock, it keeps the one taken
    expect(expiries.lockOf('t1')).toBe('p:webhook-lock:PAY_1');
    expect(expiries.lockOf('t2')).toBeUndefined();
    expiries.forget('t1');
    expect(expiries.lockOf('t1')).toBeUndefined();
  });

  it('tracks at most 10 000 claims, forgetting the oldest first', () => {
    vi.useFakeTimers({ now: 0 });
    const expiries = new ClaimExpiries();
    for (let i = 0; i <= 10_000; i++) expiries.held(`t${i}`, 30_000);
    vi.advanceTimersByTime(1000);
    expect(expiries.expiresAt('t0', 30_000)).toBe(31_000);
    expect(expiries.expiresAt('t1', 30_000)).toBe(30_000);
  });
});
