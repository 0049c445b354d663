/**
 * What the stores do about a Redis that stops answering for a while (a Sentinel failover, a
 * restart, a partition): retry a write that must land while its claim still stands, and undo
 * a write whose answer was lost once the client has given up on it. A failover takes seconds
 * (the sentinel's down-after, the promotion, the client finding the new master); one command's
 * `timeoutMs` is far shorter, so neither can be a single attempt.
 *
 * @module
 */
import { unref } from '../core/wait.js';
import { RedisStoreError } from './errors.js';

/** The waits between attempts: short first (a blip), then at most 1 s apart (a failover). */
const DELAYS_MS = [100, 200, 400, 800];
const MAX_DELAY_MS = 1000;

/** The wait before attempt `n + 1`, for a caller that retried `n` times already. */
export function retryDelayMs(n: number): number {
  return DELAYS_MS[n] ?? MAX_DELAY_MS;
}

function sleep(ms: number, background: boolean): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(resolve, ms);
    if (background) unref(timer);
  });
}

/**
 * Runs `attempt` again while it fails with a {@link RedisStoreError} (Redis not answering)
 * and `Date.now()` is before `deadline()` (read before each retry: a renewal may move it).
 * Any other error, and the last failure, are thrown. `background`: the waits do not keep the
 * process alive (nobody awaits the outcome).
 *
 * @example
 * ```ts
 * await untilAnswered(() => redis.eval(COMPLETE, keys, args), () => claimExpiresAt);
 * ```
 */
export async function untilAnswered<T>(
  attempt: () => Promise<T>,
  deadline: () => number,
  background = false,
): Promise<T> {
  for (let n = 0; ; n++) {
    try {
      return await attempt();
    } catch (error) {
      if (!(error instanceof RedisStoreError) || Date.now() + retryDelayMs(n) > deadline()) throw error;
    }
    await sleep(retryDelayMs(n), background);
  }
}

/** Most claims whose expiry a store tracks at once (the oldest is forgotten first). */
const MAX_TRACKED = 10_000;

/**
 * When each live claim of one store lapses unless renewed, by token: how long a completion
 * may keep retrying through a failover and still find its claim standing; and the payment lock
 * it took, which its renewal, completion and release carry along (they are given the token, not
 * the payment). Bounded: a forgotten claim falls back to its TTL from now, and its lock, no
 * longer renewed nor freed by this process, lapses with that TTL.
 */
export class ClaimExpiries {
  readonly #at = new Map<string, { at: number; lock: string | undefined }>();

  /** The claim `token` was taken (with the payment lock `lock`) or renewed for `ttlMs` just now. */
  held(token: string, ttlMs: number, lock = this.lockOf(token)): void {
    this.#at.delete(token);
    if (this.#at.size >= MAX_TRACKED) {
      const oldest = this.#at.keys().next();
      if (!oldest.done) this.#at.delete(oldest.value);
    }
    this.#at.set(token, { at: Date.now() + ttlMs, lock });
  }

  /** When `token`'s claim lapses (`ttlMs` from now when not tracked). */
  expiresAt(token: string, ttlMs: number): number {
    return this.#at.get(token)?.at ?? Date.now() + ttlMs;
  }

  /** The payment lock `token`'s claim took, while it is tracked. */
  lockOf(token: string): string | undefined {
    return this.#at.get(token)?.lock;
  }

  /** The claim ended (recorded or released). */
  forget(token: string): void {
    this.#at.delete(token);
  }
}
