/**
 * After the last call waiting for a pacing slot gives up, nothing of the limiter keeps the
 * process alive: its pump timer (which can wait for an hour-long Retry-After) is unref'd.
 */
import { expect, it } from 'vitest';
import { MemoryRateLimiter } from '../../../../src/index.js';

const timers = () => process.getActiveResourcesInfo().filter((r) => r === 'Timeout').length;

it("a waiter that leaves the MemoryRateLimiter queue leaves no ref'd timer behind", async () => {
  const limiter = new MemoryRateLimiter();
  // The service answered 429 with Retry-After: 30 s for this merchant's withdrawals.
  limiter.observe('m', 'withdraw', { status: 429, retryAfterMs: 30_000, elapsedMs: 1 });
  const before = timers();
  const controller = new AbortController();
  const waiting = limiter.acquire('m', 'withdraw', { signal: controller.signal, maxWaitMs: 60_000 });
  const during = timers();
  controller.abort(new Error('caller gave up'));
  await expect(waiting).rejects.toThrow('caller gave up');
  expect(during).toBeGreaterThan(before);
  // Nobody waits any more, yet the pump timer stays scheduled for 30 s and keeps the process alive.
  expect(timers()).toBe(before);
});
