/**
 * src/core/tokens/shared.ts on its own: the local guard for `POST /auth/token` (5 requests the
 * server may have seen per minute, the server's Retry-After followed, a renewal never held back
 * by the local count), the single flight every client of one merchant joins, and the store keys
 * that never hold the api key. The HTTP side is in test/integration/tokens/shared-in-process.test.ts.
 */
import { describe, expect, it } from 'vitest';
import { RateLimitError } from '../../../../src/core/errors/service.js';
import type { StoredToken } from '../../../../src/core/tokens/store.js';
import {
  SharedTokens,
  TOKEN_REQUESTS_PER_MINUTE,
  TokenLimiter,
  sharedTokens,
  tokenKey,
} from '../../../../src/core/tokens/shared.js';
import { MemoryTokenStore } from '../../../../src/core/tokens/manager.js';

const MINUTE = 60_000;
const token = (n: number): StoredToken => ({ accessToken: `tok_${n}`, expiresAt: 1e12, issuedAt: 0 });

/** The RateLimitError `run` throws (fails the test when it throws nothing). */
function refusal(run: () => void): RateLimitError {
  try {
    run();
  } catch (error) {
    expect(error).toBeInstanceOf(RateLimitError);
    return error as RateLimitError;
  }
  throw new Error('expected a RateLimitError');
}

/** A flight the test settles by hand, and the signal it was started with. */
function deferred() {
  let resolve!: (value: StoredToken) => void;
  let reject!: (error: Error) => void;
  const promise = new Promise<StoredToken>((res, rej) => ((resolve = res), (reject = rej)));
  const started: AbortSignal[] = [];
  const start = (signal: AbortSignal) => {
    started.push(signal);
    return promise;
  };
  return { start, started, resolve, reject };
}

describe('TokenLimiter', () => {
  it('lets through the spec limit of token requests in a minute, then refuses with the seconds until the oldest leaves the window', () => {
    const limiter = new TokenLimiter();
    expect(TOKEN_REQUESTS_PER_MINUTE).toBe(5);
    for (let i = 0; i < 5; i++) {
      limiter.check(i * 1000, false, false);
      limiter.record(i * 1000, { sent: true, status: 200 });
    }
    const error = refusal(() => limiter.check(10_000, false, false));
    expect(error.code).toBe('RATE_LIMITED');
    expect(error.retryable).toBe(true);
    expect(error.retryAfter).toBe(50); // the request at 0 leaves the window at 60 s
    expect(() => limiter.check(MINUTE, false, false)).not.toThrow();
  });

  it('does not count requests that never reached the server, nor the ones it refused with 429', () => {
    const limiter = new TokenLimiter();
    for (let i = 0; i < 10; i++) limiter.record(i, { sent: false });
    for (let i = 0; i < 10; i++) limiter.record(i, { sent: true, status: 429 });
    expect(() => limiter.check(20, false, false)).not.toThrow();
  });

  it("follows the server's Retry-After: no request before it, except the flight that just waited it out", () => {
    const limiter = new TokenLimiter();
    expect(limiter.record(0, { sent: true, status: 429, retryAfterMs: 30_000 })).toBe(true);
    const error = refusal(() => limiter.check(10_000, false, false));
    expect(error.retryAfter).toBe(20);
    refusal(() => limiter.check(10_000, true, false)); // a renewal too: the server asked
    expect(() => limiter.check(10_000, false, true)).not.toThrow();
    expect(() => limiter.check(30_000, false, false)).not.toThrow();
  });

  it('a 429 without Retry-After asks for no wait', () => {
    const limiter = new TokenLimiter();
    expect(limiter.record(0, { sent: true, status: 429 })).toBe(false);
    expect(() => limiter.check(1, false, false)).not.toThrow();
  });

  it('never holds back a renewal of a refused token on its own count', () => {
    const limiter = new TokenLimiter();
    for (let i = 0; i < 5; i++) limiter.record(i, { sent: true, status: 200 });
    refusal(() => limiter.check(10, false, false));
    expect(() => limiter.check(10, true, false)).not.toThrow();
  });
});

describe('SharedTokens.join (one refresh for every client of a merchant)', () => {
  it('concurrent callers share one flight and its token; the next caller after it settles starts a new one', async () => {
    const shared = new SharedTokens();
    const flight = deferred();
    const calls = [shared.join(flight.start, undefined), shared.join(flight.start, new AbortController().signal)];
    flight.resolve(token(1));
    expect(await Promise.all(calls)).toEqual([token(1), token(1)]);
    expect(flight.started).toHaveLength(1);

    const next = deferred();
    const later = shared.join(next.start, undefined);
    next.resolve(token(2));
    expect(await later).toEqual(token(2));
    expect(next.started).toHaveLength(1);
  });

  it('a failed flight fails every waiter with its error, and the next caller tries again', async () => {
    const shared = new SharedTokens();
    const flight = deferred();
    const calls = [shared.join(flight.start, undefined), shared.join(flight.start, undefined)];
    const failure = new Error('token endpoint down');
    flight.reject(failure);
    for (const call of calls) await expect(call).rejects.toBe(failure);
    const next = deferred();
    const retry = shared.join(next.start, undefined);
    next.resolve(token(2));
    await expect(retry).resolves.toEqual(token(2));
  });

  it('a caller that leaves gets its own abort reason; the flight runs on for those still waiting', async () => {
    const shared = new SharedTokens();
    const flight = deferred();
    const leaving = new AbortController();
    const left = shared.join(flight.start, leaving.signal);
    const staying = shared.join(flight.start, undefined);
    const reason = new Error('checkout request closed');
    leaving.abort(reason);
    await expect(left).rejects.toBe(reason);
    expect(flight.started[0]?.aborted).toBe(false);
    flight.resolve(token(1));
    await expect(staying).resolves.toEqual(token(1));
  });

  it('the flight is aborted when its last waiter leaves, so nothing runs on for nobody', async () => {
    const shared = new SharedTokens();
    const flight = deferred();
    const a = new AbortController();
    const b = new AbortController();
    const calls = [shared.join(flight.start, a.signal), shared.join(flight.start, b.signal)];
    a.abort(new Error('a left'));
    expect(flight.started[0]?.aborted).toBe(false);
    b.abort(new Error('b left'));
    expect(flight.started[0]?.aborted).toBe(true);
    await Promise.allSettled(calls);
    // The abandoned flight is not joined again: a new caller starts a fresh one.
    const next = deferred();
    const fresh = shared.join(next.start, undefined);
    expect(next.started).toHaveLength(1);
    next.resolve(token(3));
    await expect(fresh).resolves.toEqual(token(3));
  });

  it('a caller already aborted starts nothing', async () => {
    const shared = new SharedTokens();
    const flight = deferred();
    const controller = new AbortController();
    controller.abort(new Error('gone'));
    await expect(shared.join(flight.start, controller.signal)).rejects.toThrow('gone');
    expect(flight.started).toHaveLength(0);
  });
});

describe('SharedTokens bookkeeping', () => {
  it('refuse drops the refused token from the process and remembers the last four refused', () => {
    const shared = new SharedTokens();
    shared.hold(token(1));
    shared.refuse('tok_1');
    expect(shared.local).toBeUndefined();
    for (let n = 2; n <= 5; n++) shared.refuse(`tok_${n}`);
    shared.refuse('tok_5');
    expect(shared.refused).toEqual(['tok_2', 'tok_3', 'tok_4', 'tok_5']);
  });

  it('refusing another token keeps the one the process holds', () => {
    const shared = new SharedTokens();
    shared.hold(token(1));
    shared.refuse('tok_9');
    expect(shared.local).toEqual(token(1));
  });

  it('warns once per kind', () => {
    const shared = new SharedTokens();
    const lines: string[] = [];
    const log = (message: string) => lines.push(message);
    shared.warn('store-get', 'get failed', log);
    shared.warn('store-get', 'get failed again', log);
    shared.warn('store-set', 'set failed', log);
    expect(lines).toEqual(['get failed', 'set failed']);
  });
});

describe('sharedTokens and tokenKey', () => {
  it('one state per store and key: clients of one merchant on one store share it, other keys and stores do not', () => {
    const store = new MemoryTokenStore();
    expect(sharedTokens(store, 'k1')).toBe(sharedTokens(store, 'k1'));
    expect(sharedTokens(store, 'k2')).not.toBe(sharedTokens(store, 'k1'));
    expect(sharedTokens(new MemoryTokenStore(), 'k1')).not.toBe(sharedTokens(store, 'k1'));
  });

  it('a key is a hash of base URL, merchant and api key: stable, distinct for each, and never holding them in clear', async () => {
    const key = await tokenKey('https://api.example.test/v1/', 'M1', 'sk_live_secret');
    expect(key).toMatch(/^myr-gateway:token:[0-9a-f]{64}$/);
    expect(key).not.toContain('sk_live_secret');
    expect(key).not.toContain('M1');
    expect(await tokenKey('https://api.example.test/v1/', 'M1', 'sk_live_secret')).toBe(key);
    const others = await Promise.all([
      tokenKey('https://sandbox.example.test/v1/', 'M1', 'sk_live_secret'),
      tokenKey('https://api.example.test/v1/', 'M2', 'sk_live_secret'),
      tokenKey('https://api.example.test/v1/', 'M1', 'sk_live_other'),
    ]);
    expect(new Set([key, ...others]).size).toBe(4);
  });
});
