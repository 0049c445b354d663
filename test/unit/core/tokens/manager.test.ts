/**
 * src/core/tokens/manager.ts TokenManager on its own, with a fake `fetchToken` and an injected clock:
 * one fetch for any number of concurrent callers, the refresh margin clamped to half a
 * token's lifetime, an early refresh that fails falling back to the still-valid token, and a
 * renewal that replaces only the refused token. The HTTP side is in the integration tests.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { MemoryTokenStore, TokenManager, type TokenAttemptHook } from '../../../../src/core/tokens/manager.js';
import type { StoredToken, TokenStore } from '../../../../src/core/tokens/store.js';
import { tokenSeal } from '../../../../src/core/tokens/seal.js';
import { RateLimitError, ServiceUnavailableError } from '../../../../src/core/errors/service.js';

const MINUTE = 60_000;

afterEach(() => vi.restoreAllMocks());

/** A manager over a store of its own, a settable clock and a fake token endpoint. */
function setup(
  options: {
    lifetimeMs?: number;
    marginMs?: number;
    store?: TokenStore;
    storeTimeoutMs?: number;
    storeRefreshTimeoutMs?: number;
  } = {},
) {
  let now = 1_000_000;
  let issued = 0;
  const fetches: AbortSignal[] = [];
  let fail: Error | undefined;
  let gate: Promise<void> = Promise.resolve();
  const fetchToken = async (signal: AbortSignal, beforeAttempt: TokenAttemptHook): Promise<StoredToken> => {
    fetches.push(signal);
    const report = beforeAttempt();
    await gate;
    report({ sent: true, status: fail ? 503 : 200 });
    if (fail) throw fail;
    issued += 1;
    const lifetime = options.lifetimeMs ?? 60 * MINUTE;
    return { accessToken: `tok_${issued}`, expiresAt: now + lifetime, issuedAt: now };
  };
  const manager = new TokenManager({
    store: options.store ?? new MemoryTokenStore(),
    key: async () => 'myr-gateway:token:unit',
    seal: () => tokenSeal('sk_unit'),
    fetchToken,
    now: () => now,
    refreshMarginMs: options.marginMs ?? MINUTE,
    storeTimeoutMs: options.storeTimeoutMs ?? 1_000,
    storeRefreshTimeoutMs: options.storeRefreshTimeoutMs ?? 1_000,
  });
  return {
    manager,
    fetches,
    advance: (ms: number) => {
      now += ms;
    },
    failWith: (error: Error | undefined) => {
      fail = error;
    },
    hold: () => {
      let release = () => {};
      gate = new Promise<void>((resolve) => {
        release = resolve;
      });
      return release;
    },
  };
}

describe('TokenManager', () => {
  it('fetches once for many concurrent callers on a cold cache, then serves the cached token', async () => {
    const t = setup();
    const release = t.hold();
    const calls = Array.from({ length: 25 }, () => t.manager.get());
    release();
    expect(new Set(await Promise.all(calls))).toEqual(new Set(['tok_1']));
    expect(t.fetches).toHaveLength(1);
    expect(await t.manager.get()).toBe('tok_1');
    expect(t.fetches).toHaveLength(1);
  });

  it('refreshes refreshMarginMs before expiry', async () => {
    const t = setup({ lifetimeMs: 60 * MINUTE, marginMs: MINUTE });
    await t.manager.get();
    t.advance(59 * MINUTE - 1);
    expect(await t.manager.get()).toBe('tok_1');
    t.advance(1);
    expect(await t.manager.get()).toBe('tok_2');
    expect(t.fetches).toHaveLength(2);
  });

  it('clamps the margin to half the lifetime, so a short-lived token is still used', async () => {
    // A 90 s token with a 60 s margin would be refreshed after 30 s; clamped, after 45 s.
    const t = setup({ lifetimeMs: 90_000, marginMs: MINUTE });
    await t.manager.get();
    t.advance(44_999);
    expect(await t.manager.get()).toBe('tok_1');
    t.advance(1);
    expect(await t.manager.get()).toBe('tok_2');
  });

  it('forget drops a refused token from the process too: the next call fetches a new one', async () => {
    const t = setup();
    await t.manager.get();
    await t.manager.forget('tok_1');
    expect(await t.manager.get()).toBe('tok_2');
    expect(t.fetches).toHaveLength(2);
  });

  it('keeps serving the still-valid token when an early refresh fails, and throws once it has expired', async () => {
    const t = setup({ lifetimeMs: 60 * MINUTE });
    await t.manager.get();
    t.advance(59 * MINUTE + 30_000);
    t.failWith(
      new ServiceUnavailableError('GATEWAY_ERROR (HTTP 502): down', {
        code: 'GATEWAY_ERROR',
        status: 502,
        retryable: true,
      }),
    );
    expect(await t.manager.get()).toBe('tok_1');
    t.advance(30_000);
    await expect(t.manager.get()).rejects.toBeInstanceOf(ServiceUnavailableError);
  });

  it('renew replaces the refused token once, and hands a caller holding an already replaced one the new token', async () => {
    const t = setup();
    await t.manager.get();
    const renewed = await Promise.all([t.manager.renew('tok_1'), t.manager.renew('tok_1')]);
    expect(renewed).toEqual(['tok_2', 'tok_2']);
    expect(await t.manager.renew('tok_1')).toBe('tok_2');
    expect(t.fetches).toHaveLength(2);
  });

  it('the local limiter refuses a sixth token request in a minute before it is sent', async () => {
    const t = setup();
    for (let i = 0; i < 5; i++) {
      await t.manager.forget(await t.manager.get());
    }
    expect(t.fetches).toHaveLength(5);
    const refused = await t.manager.get().catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(RateLimitError);
    expect(t.fetches).toHaveLength(6); // fetchToken ran, but the limiter stopped it before sending
    t.advance(MINUTE);
    expect(await t.manager.get()).toBe('tok_6');
  });

  it('a store that throws is bypassed: the token held in the process serves the call, with one warning', async () => {
    const warn = vi.spyOn(console, 'warn').mockImplementation(() => {});
    const broken: TokenStore = {
      get: () => Promise.reject(new Error('store down')),
      set: () => Promise.reject(new Error('store down')),
      delete: () => undefined,
    };
    const t = setup({ store: broken });
    expect(await t.manager.get()).toBe('tok_1');
    expect(await t.manager.get()).toBe('tok_1');
    expect(t.fetches).toHaveLength(1);
    expect(warn.mock.calls.filter(([message]) => String(message).includes("token store's get"))).toHaveLength(1);
  });

  it("a process waiting on another one's refresh keeps waiting while the store reports progress", async () => {
    // Two processes over one shared store: the first holds the lock, the second polls it.
    const fleet: { token?: StoredToken; holder?: Promise<StoredToken> } = {};
    const process = (): TokenStore => ({
      get: () => fleet.token,
      set: (_key, token) => void (fleet.token = token),
      delete: () => void delete fleet.token,
      async refresh(_key, fetchToken, { progress }) {
        if (!fleet.holder) return (fleet.holder = fetchToken().then((token) => (fleet.token = token)));
        while (!fleet.token) {
          progress?.();
          await new Promise((resolve) => setTimeout(resolve, 5));
        }
        return fleet.token;
      },
    });
    const bounds = { storeTimeoutMs: 20, storeRefreshTimeoutMs: 50 };
    const holder = setup({ store: process(), ...bounds });
    const waiter = setup({ store: process(), ...bounds });
    const release = holder.hold();
    const first = holder.manager.get();
    const second = waiter.manager.get();
    await new Promise((resolve) => setTimeout(resolve, 200)); // four times the refresh bound
    release();
    expect(await Promise.all([first, second])).toEqual(['tok_1', 'tok_1']);
    expect(waiter.fetches).toHaveLength(0);
  });
});
