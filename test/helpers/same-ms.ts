/**
 * Two deliveries that began in the same millisecond (a receiver given several at once): the
 * ledger reads its clock as a run starts, so a run started under `atMs` takes its claim's time
 * from `now`.
 */
import { vi } from 'vitest';

/** Calls `start` with `Date.now()` answering `now`, and puts the clock back as `start` returns (before anything it awaits). */
export function atMs<T>(now: number, start: () => T): T {
  const clock = vi.spyOn(Date, 'now').mockReturnValue(now);
  try {
    return start();
  } finally {
    clock.mockRestore();
  }
}
