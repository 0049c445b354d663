/**
 * src/core/tokens/vault.ts TokenVault on its own, with a fake store: a store only ever holds
 * sealed tokens; whatever it answers that is not a token sealed for this merchant, and any
 * store that fails or hangs, is a miss served by the token held in the process (one warning,
 * never a secret); and one call's store operations share one time budget.
 */
import { describe, expect, it } from 'vitest';
import { StoreBudget } from '../../../../src/core/store-budget.js';
import { tokenSeal } from '../../../../src/core/tokens/seal.js';
import { SharedTokens } from '../../../../src/core/tokens/shared.js';
import type { StoredToken, TokenStore } from '../../../../src/core/tokens/store.js';
import { TokenVault } from '../../../../src/core/tokens/vault.js';

const KEY = 'myr-gateway:token:unit';
const NOW = 1_000_000;
const TOKEN: StoredToken = { accessToken: 'tok_secret_live', expiresAt: NOW + 3_600_000, issuedAt: NOW - 5_000 };
const LOCAL: StoredToken = { accessToken: 'tok_held_here', expiresAt: NOW + 60_000, issuedAt: NOW };

/** A store that keeps values in a map unless told to answer otherwise. */
function fakeStore(answer?: (op: string) => unknown): TokenStore & { values: Map<string, unknown> } {
  const values = new Map<string, unknown>();
  return {
    values,
    get: (key) => (answer ? (answer('get') as StoredToken) : (values.get(key) as StoredToken | undefined)),
    set: (key, token) => {
      if (answer) return answer('set') as void;
      values.set(key, token);
    },
    delete: (key) => {
      if (answer) return answer('delete') as void;
      values.delete(key);
    },
  };
}

async function setup(store: TokenStore, apiKey = 'sk_live_one') {
  const warnings: string[] = [];
  const vault = new TokenVault(
    store,
    KEY,
    await tokenSeal(apiKey),
    (m) => warnings.push(m),
    () => NOW,
  );
  const shared = new SharedTokens();
  shared.hold(LOCAL);
  const budget = new StoreBudget(1000);
  return { vault, shared, warnings, budget: () => budget };
}

describe('TokenVault', () => {
  it('writes the token sealed, with issuedAt at the write, and reads it back opened', async () => {
    const store = fakeStore();
    const { vault, shared, budget } = await setup(store);
    await vault.write(shared, TOKEN, new AbortController().signal, budget);
    const kept = store.values.get(KEY) as StoredToken;
    expect(JSON.stringify(kept)).not.toContain('tok_secret_live');
    expect(kept).toEqual({ accessToken: expect.stringMatching(/^v1\./), expiresAt: TOKEN.expiresAt, issuedAt: NOW });

    // A second process on the same store and api key, with nothing cached: it must decrypt.
    const other = await setup(store);
    expect(await other.vault.read(other.shared, undefined, other.budget)).toEqual({ ...TOKEN, issuedAt: NOW });
    expect(other.shared.local?.accessToken).toBe('tok_secret_live');
  });

  it("a token sealed with another merchant's api key is a miss: the process's token serves, warned once", async () => {
    const store = fakeStore();
    const writer = await setup(store, 'sk_live_other');
    await writer.vault.write(writer.shared, TOKEN, new AbortController().signal, writer.budget);
    const { vault, shared, warnings, budget } = await setup(store);
    expect(await vault.read(shared, undefined, budget)).toBe(LOCAL);
    expect(await vault.read(shared, undefined, budget)).toBe(LOCAL);
    expect(warnings).toEqual([expect.stringMatching(/cannot open/)]);
  });

  it.each([
    ['a string', 'tok_secret_live'],
    ['a token in clear without expiry', { accessToken: 'tok_secret_live' }],
    ['an unsealed token', { accessToken: 'tok_secret_live', expiresAt: NOW + 1000 }],
  ])('%s from the store is a miss, warned once without the value', async (_label, value) => {
    const store = fakeStore();
    store.values.set(KEY, value);
    const { vault, shared, warnings, budget } = await setup(store);
    expect(await vault.read(shared, undefined, budget)).toBe(LOCAL);
    expect(warnings).toHaveLength(1);
    expect(warnings.join()).not.toContain('tok_secret_live');
  });

  it('a store that rejects is a miss, warned once per operation without the error text (it may echo a secret)', async () => {
    const store = fakeStore(() => Promise.reject(new Error('WRONGPASS redis://:hunter2@redis')));
    const { vault, shared, warnings, budget } = await setup(store);
    expect(await vault.read(shared, undefined, budget)).toBe(LOCAL);
    expect(await vault.read(shared, undefined, budget)).toBe(LOCAL);
    await vault.remove(shared, undefined, budget);
    expect(warnings).toEqual([
      "the token store's get failed; using the token held in this process.",
      "the token store's delete failed; using the token held in this process.",
    ]);
  });

  it('a store that hangs costs one call its budget once: later operations of the call are not waited on', async () => {
    const asked: string[] = [];
    const store = fakeStore((op) => {
      asked.push(op);
      return new Promise(() => undefined);
    });
    const { vault, shared, warnings } = await setup(store);
    const budget = new StoreBudget(30);
    expect(await vault.read(shared, undefined, () => budget)).toBe(LOCAL);
    expect(budget.usable).toBe(false);
    await vault.write(shared, TOKEN, new AbortController().signal, () => budget);
    expect(await vault.read(shared, undefined, () => budget)).toBe(LOCAL);
    expect(asked).toEqual(['get', 'get']); // the write was not tried; the second get not waited on
    expect(warnings).toEqual(["the token store's get did not answer in time; using the token held in this process."]);
  });

  it('a token the service refused is never served from the store, and the caller learns it is there', async () => {
    const store = fakeStore();
    const { vault, shared, budget } = await setup(store);
    await vault.write(shared, TOKEN, new AbortController().signal, budget);
    shared.refuse('tok_secret_live');
    expect(await vault.lookup(shared, undefined, budget)).toEqual({ token: LOCAL, refusedInStore: true });
  });

  it('the end of the call is not a store failure: the caller gets its abort reason, and no warning', async () => {
    const store = fakeStore(() => new Promise(() => undefined));
    const { vault, shared, warnings, budget } = await setup(store);
    const call = new AbortController();
    const reason = new Error('call aborted');
    const read = vault.read(shared, call.signal, budget);
    call.abort(reason);
    await expect(read).rejects.toBe(reason);
    expect(warnings).toEqual([]);
  });
});
