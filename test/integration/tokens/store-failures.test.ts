/**
 * A TokenStore that hangs, rejects or returns garbage never fails or hangs a call (the token
 * held in the process takes over, with one warning), and the optional `refresh` of the fleet
 * contract is used, and degraded from, as documented (issue 7, "Tokens").
 */
import { describe, expect, it, vi } from 'vitest';
import {
  AbortError,
  AuthenticationError,
  MemoryTokenStore,
  type StoredToken,
  TimeoutError,
  type TokenStore,
} from '../../../src/index.js';
import { caught, clientFor, paymentParams } from '../../helpers/client.js';
import { clockedMock } from '../../helpers/clocked-mock.js';

const { mock, now, time } = clockedMock();

const never = () => new Promise<never>(() => undefined);
const fail = () => Promise.reject(new Error('store down: redis://:hunter2@cache'));

/** A store over a Map whose operations the test can replace. */
function storeWith(overrides: Partial<TokenStore>): TokenStore {
  const inner = new MemoryTokenStore();
  return {
    get: (key) => inner.get(key),
    set: (key, token) => inner.set(key, token),
    delete: (key) => inner.delete(key),
    ...overrides,
  };
}

function warnings() {
  const warn = vi.spyOn(console, 'warn').mockImplementation(() => undefined);
  return () => warn.mock.calls.map((args) => String(args[0]));
}

describe('a failing or slow token store', () => {
  it.each([
    ['get hangs', { get: never }],
    ['get rejects', { get: fail }],
    [
      'get throws synchronously',
      {
        get: () => {
          throw new Error('boom');
        },
      },
    ],
    ['set hangs', { set: never }],
    ['set rejects', { set: fail }],
  ])(
    '%s: calls succeed on the in-process token, with one warning and one token request',
    async (_label, overrides) => {
      const read = warnings();
      const { gateway } = clientFor(mock, { now, tokenStore: storeWith(overrides), tokenStoreTimeout: 20 });
      for (let i = 0; i < 3; i++) await gateway.payments.create(paymentParams());
      expect(mock.count('auth')).toBe(1);
      expect(mock.count('payment.create')).toBe(3);
      expect(read()).toHaveLength(1);
      expect(read()[0]).toMatch(/token store/);
      expect(read()[0]).not.toContain('hunter2');
    },
    5000,
  );

  it('a delete that rejects does not stop a renewal after TOKEN_EXPIRED', async () => {
    const read = warnings();
    const { gateway } = clientFor(mock, { now, tokenStore: storeWith({ delete: fail }) });
    await gateway.payments.create(paymentParams());
    mock.expireTokens();
    const payment = await gateway.payments.create(paymentParams());
    expect(payment.payment_id).toMatch(/^PAY_/);
    expect(mock.count('auth')).toBe(2);
    expect(read()).toHaveLength(1);
  });

  it('a refused token left in a store whose delete and write fail is not served again', async () => {
    const read = warnings();
    let broken = false;
    const inner = new MemoryTokenStore();
    const store = storeWith({
      get: (key) => inner.get(key),
      set: (key, token) => (broken ? fail() : inner.set(key, token)),
      delete: fail,
    });
    const { gateway } = clientFor(mock, { now, tokenStore: store });
    await gateway.payments.create(paymentParams());
    broken = true;
    mock.expireTokens();
    for (let i = 0; i < 3; i++) await gateway.payments.create(paymentParams());
    expect(mock.count('auth')).toBe(2);
    expect(mock.requests.filter((r) => r.endpoint === 'payment.create' && r.status === 401)).toHaveLength(1);
    expect(read().filter((m) => /token store's (delete|set)/.test(m))).toHaveLength(2);
  });

  it('a hanging get is bounded by the call signal and by totalTimeout', async () => {
    warnings();
    const slow = storeWith({ get: never });
    const controller = new AbortController();
    const aborted = caught(
      clientFor(mock, { now, tokenStore: slow, tokenStoreTimeout: 600_000 }).gateway.payments.create(paymentParams(), {
        signal: controller.signal,
      }),
    );
    controller.abort();
    expect(await aborted).toBeInstanceOf(AbortError);
    const timedOut = await caught(
      clientFor(mock, { now, tokenStore: slow, tokenStoreTimeout: 600_000 }).gateway.payments.create(paymentParams(), {
        totalTimeout: 30,
      }),
    );
    expect(timedOut).toBeInstanceOf(TimeoutError);
    expect(mock.count('payment.create')).toBe(0);
  }, 5000);

  it.each([
    ['a header-breaking token', { accessToken: 'tok\r\nX-Injected: 1', expiresAt: Number.MAX_SAFE_INTEGER }],
    ['a number as token', { accessToken: 5, expiresAt: Number.MAX_SAFE_INTEGER }],
    ['a string', 'junk'],
    ['a token without expiry', { accessToken: 'tok' }],
  ])('returning %s is ignored: a fresh token is fetched', async (_label, garbage) => {
    warnings();
    const { gateway } = clientFor(mock, {
      now,
      tokenStore: storeWith({ get: () => garbage as unknown as StoredToken }),
    });
    const payment = await gateway.payments.create(paymentParams());
    expect(payment.payment_id).toMatch(/^PAY_/);
    expect(mock.count('auth')).toBe(1);
    expect(mock.requests.find((r) => r.endpoint === 'payment.create')?.status).toBe(200);
  });
});

/** A fleet store (RedisTokenStore's shape): one Map, with `refresh` as the contract describes. */
function fleetStore(
  shared: Map<string, StoredToken>,
  calls: Array<{ key: string; staleToken?: string; signal?: AbortSignal }>,
): TokenStore {
  return {
    ...lockedRefresh(shared, calls),
    get: (key) => shared.get(key),
    set: (key, token) => void shared.set(key, token),
    delete: (key) => void shared.delete(key),
  };
}

/** The store-wide lock: the holder fetches, everyone else waits for its result. */
const held = new Map<string, Promise<StoredToken>>();
function lockedRefresh(
  shared: Map<string, StoredToken>,
  calls: Array<{ key: string; staleToken?: string; signal?: AbortSignal }>,
): Pick<TokenStore, 'refresh'> {
  return {
    refresh(key, fetchToken, options) {
      calls.push({ key, ...options });
      const current = shared.get(key);
      if (
        options.staleToken !== undefined &&
        current &&
        current.accessToken !== options.staleToken &&
        current.expiresAt > time.clock
      ) {
        return Promise.resolve(current);
      }
      let flight = held.get(key);
      if (!flight) {
        flight = fetchToken()
          .then((token) => (shared.set(key, token), token))
          .finally(() => held.delete(key));
        held.set(key, flight);
      }
      return flight;
    },
  };
}

describe('TokenStore.refresh (one refresh per fleet)', () => {
  it('is called with the hashed key and a signal, and replaces a rejected token once for two processes', async () => {
    const shared = new Map<string, StoredToken>();
    const calls: Array<{ key: string; staleToken?: string; signal?: AbortSignal }> = [];
    // Two store objects over one Map: two processes of a fleet.
    const a = clientFor(mock, { now, tokenStore: fleetStore(shared, calls) }).gateway;
    const b = clientFor(mock, { now, tokenStore: fleetStore(shared, calls) }).gateway;
    await a.payments.create(paymentParams());
    await b.payments.create(paymentParams());
    expect(mock.count('auth')).toBe(1);
    expect(calls).toHaveLength(1);
    expect(calls[0]?.key).toMatch(/^myr-gateway:token:[0-9a-f]{64}$/);
    expect(calls[0]?.signal).toBeInstanceOf(AbortSignal);
    expect(calls[0]?.staleToken).toBeUndefined();
    const stale = mock.requests.find((r) => r.endpoint === 'payment.create')?.headers.authorization?.slice(7);
    // The store holds, and is told about, the sealed form only.
    const staleSealed = shared.get(calls[0]!.key)?.accessToken;
    expect(staleSealed).toMatch(/^v1\./);
    expect(staleSealed).not.toContain(stale);

    mock.expireTokens();
    await Promise.all([a.payments.create(paymentParams()), b.payments.create(paymentParams())]);
    expect(calls.length).toBeGreaterThan(1);
    expect(calls.slice(1).every((c) => c.staleToken === staleSealed)).toBe(true);
    expect(mock.count('auth')).toBe(2); // one replacement for the fleet
  });

  it.each([
    [
      'throws',
      async () => {
        throw new Error('lock lost');
      },
    ],
    ['hangs', never],
    ['returns garbage', async () => ({ accessToken: '' }) as StoredToken],
  ])(
    'a refresh that %s degrades to a token fetched here, with one warning',
    async (_label, refresh) => {
      const read = warnings();
      const store = { ...storeWith({}), refresh };
      const { gateway } = clientFor(mock, { now, tokenStore: store, tokenStoreTimeout: 10, timeout: 50 });
      for (let i = 0; i < 2; i++) await gateway.payments.create(paymentParams());
      expect(mock.count('auth')).toBe(1);
      expect(read()).toHaveLength(1);
    },
    5000,
  );

  it('a refresh that fails after fetching does not fetch twice; the service refusing the key is not a store failure', async () => {
    const read = warnings();
    const after = {
      ...storeWith({}),
      refresh: async (_k: string, fetchToken: () => Promise<StoredToken>) => {
        await fetchToken();
        throw new Error('write failed');
      },
    };
    await clientFor(mock, { now, tokenStore: after }).gateway.payments.create(paymentParams());
    expect(mock.count('auth')).toBe(1);
    expect(read()).toHaveLength(1);

    const passThrough = {
      ...storeWith({}),
      refresh: (_k: string, fetchToken: () => Promise<StoredToken>) => fetchToken(),
    };
    const error = await caught(
      clientFor(mock, { now, apiKey: 'sk_wrong', tokenStore: passThrough }).gateway.payments.create(paymentParams()),
    );
    expect(error).toBeInstanceOf(AuthenticationError);
    expect(error.code).toBe('INVALID_CREDENTIALS');
    expect(mock.count('auth')).toBe(2);
    // (The file creates enough clients for the once-per-process "many clients" note; not a token store warning.)
    expect(read().filter((m) => /token store/.test(m))).toHaveLength(1);
  });
});

// Last in the file: its clients would otherwise move the once-per-process "many clients" note
// into the warnings an earlier test counts.
describe('a store answering after the call stopped waiting', () => {
  it('a store that fails after the call stopped waiting leaves no unhandled rejection (which would end a Node process)', async () => {
    warnings();
    const unhandled: unknown[] = [];
    const listener = (reason: unknown) => unhandled.push(reason);
    process.on('unhandledRejection', listener);
    try {
      let late = false;
      const inner = new MemoryTokenStore();
      // Like a Redis store whose own timeoutMs is longer than the client's tokenStoreTimeout.
      const lateFailure = () =>
        new Promise<never>((_, reject) => setTimeout(() => reject(new Error('Redis did not answer')), 50));
      const store = storeWith({
        get: (key) => (late ? lateFailure() : inner.get(key)),
        set: (key, token) => inner.set(key, token),
      });
      const { gateway } = clientFor(mock, { now, tokenStore: store, tokenStoreTimeout: 20 });
      await gateway.payments.create(paymentParams());
      late = true;
      mock.expireTokens(); // the renewal reads the store again after the call's store time is spent
      const payment = await gateway.payments.create(paymentParams());
      expect(payment.payment_id).toMatch(/^PAY_/);
      await new Promise((resolve) => setTimeout(resolve, 200)); // every late answer has failed by now
    } finally {
      process.off('unhandledRejection', listener);
    }
    expect(unhandled).toEqual([]);
  }, 5000);
});
