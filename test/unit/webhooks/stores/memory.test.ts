import { inspect } from 'node:util';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { describe, expect, it } from 'vitest';
import { ConfigurationError } from '../../../../src/core/errors/base.js';
import { MemoryWebhookStore, type WebhookClaim } from '../../../../src/webhooks/index.js';

function fakeClock(start = 1_000_000) {
  let now = start;
  return { now: () => now, advance: (ms: number) => (now += ms) };
}

function token(claim: WebhookClaim): string {
  if (!claim.acquired) throw new Error('expected the claim to be acquired');
  return claim.token;
}

describe('MemoryWebhookStore', () => {
  it('claims a key once; a second claim sees it in flight, then done after complete', async () => {
    const store = new MemoryWebhookStore();
    const t = token(await store.claim('k', 1000));
    expect(await store.claim('k', 1000)).toEqual({ acquired: false, state: 'in_flight' });
    await store.complete('k', t, 60_000);
    expect(await store.claim('k', 1000)).toEqual({ acquired: false, state: 'done' });
  });

  it('release frees the key for the next claim, only for the holder of the token', async () => {
    const store = new MemoryWebhookStore();
    const t = token(await store.claim('k', 1000));
    await store.release('k', 'not-the-token');
    expect((await store.claim('k', 1000)).acquired).toBe(false);
    await store.release('k', t);
    const again = await store.claim('k', 1000);
    expect(again.acquired).toBe(true);
    expect(token(again)).not.toBe(t);
  });

  it('release never frees a done key', async () => {
    const store = new MemoryWebhookStore();
    const t = token(await store.claim('k', 1000));
    await store.complete('k', t, 60_000);
    await store.release('k', t);
    expect(await store.claim('k', 1000)).toEqual({ acquired: false, state: 'done' });
  });

  it('lets a claim expire (a crashed worker), and then the late worker cannot touch the new holder', async () => {
    const clock = fakeClock();
    const store = new MemoryWebhookStore({ clock: clock.now });
    const first = token(await store.claim('k', 1000));
    clock.advance(999);
    expect((await store.claim('k', 1000)).acquired).toBe(false);
    clock.advance(2);
    const second = token(await store.claim('k', 1000));
    await store.release('k', first);
    await store.complete('k', first, 60_000);
    expect(await store.claim('k', 1000)).toEqual({ acquired: false, state: 'in_flight' });
    await store.complete('k', second, 60_000);
    expect(await store.claim('k', 1000)).toEqual({ acquired: false, state: 'done' });
  });

  it('complete and release answer whether the claim was still the caller’s', async () => {
    const clock = fakeClock();
    const store = new MemoryWebhookStore({ clock: clock.now });
    const t = token(await store.claim('k', 1000));
    expect(await store.complete('k', 'other', 60_000)).toBe(false);
    expect(await store.release('k', 'other')).toBe(false);
    expect(await store.complete('k', t, 60_000)).toBe(true);
    expect(await store.release('k', t)).toBe(false);
    const lapsed = token(await store.claim('j', 10));
    clock.advance(100);
    expect(await store.release('j', lapsed)).toBe(false);
    expect(await store.complete('j', lapsed, 60_000)).toBe(false);
    expect(await store.claim('j', 1000)).toEqual({ acquired: false, state: 'done' });
  });

  it('records done even when the own claim expired and nobody took the key', async () => {
    const clock = fakeClock();
    const store = new MemoryWebhookStore({ clock: clock.now });
    const t = token(await store.claim('k', 10));
    clock.advance(100);
    await store.complete('k', t, 60_000);
    expect(await store.claim('k', 1000)).toEqual({ acquired: false, state: 'done' });
  });

  it("renew extends only the holder's live claim, and never takes a free, done or expired key", async () => {
    const clock = fakeClock();
    const store = new MemoryWebhookStore({ clock: clock.now });
    const held = token(await store.claim('k', 100));
    clock.advance(90);
    expect(await store.renew('k', held, 100)).toBe(true);
    clock.advance(90); // 180 > the first 100, < the renewed 190
    expect(await store.claim('k', 100)).toEqual({ acquired: false, state: 'in_flight' });
    expect(await store.renew('k', 'someone-else', 100)).toBe(false);
    clock.advance(20); // the renewed claim expired
    expect(await store.renew('k', held, 100)).toBe(false);
    expect(await store.renew('free', held, 100)).toBe(false);
    expect((await store.claim('free', 100)).acquired).toBe(true);
    const next = token(await store.claim('k', 100));
    await store.complete('k', next, 1000);
    expect(await store.renew('k', next, 100)).toBe(false);
    expect(await store.claim('k', 100)).toEqual({ acquired: false, state: 'done' });
  });

  it('forgets a done key after its TTL', async () => {
    const clock = fakeClock();
    const store = new MemoryWebhookStore({ clock: clock.now });
    await store.complete('k', token(await store.claim('k', 10)), 600_000);
    clock.advance(600_000);
    expect((await store.claim('k', 10)).acquired).toBe(true);
  });

  it('stays within maxEntries, dropping the oldest generation first', async () => {
    const store = new MemoryWebhookStore({ maxEntries: 4 });
    for (const k of ['a', 'b', 'c', 'd', 'e']) await store.claim(k, 60_000);
    expect(store.size).toBeLessThanOrEqual(4);
    expect((await store.claim('c', 60_000)).acquired).toBe(false); // kept: within the newest maxEntries / 2
    expect((await store.claim('d', 60_000)).acquired).toBe(false);
    expect((await store.claim('a', 60_000)).acquired).toBe(true); // dropped with its generation
  });

  it('keeps a completed key that moved to the newest generation', async () => {
    const store = new MemoryWebhookStore({ maxEntries: 4 });
    const t = token(await store.claim('a', 60_000));
    await store.claim('b', 60_000);
    await store.claim('c', 60_000); // a and b are now the previous generation
    await store.complete('a', t, 60_000); // a moves to the newest one
    await store.claim('d', 60_000);
    await store.claim('e', 60_000); // rotates: a stays (in the previous generation now), b goes
    expect(await store.claim('a', 60_000)).toEqual({ acquired: false, state: 'done' });
    expect((await store.claim('b', 60_000)).acquired).toBe(true);
  });

  it('keeps memory flat under two million ids with O(1) claims', async () => {
    // A real GC between measurements, so the heap figures are live memory, not garbage.
    setFlagsFromString('--expose-gc');
    const gc = runInNewContext('gc') as () => void;
    const store = new MemoryWebhookStore({ maxEntries: 10_000 });
    const feed = async (from: number, to: number) => {
      for (let i = from; i < to; i++) {
        const key = `payment:PAY_${i}:SUCCESS`;
        const claim = await store.claim(key, 60_000);
        if (claim.acquired && i % 2 === 0) await store.complete(key, claim.token, 86_400_000);
      }
    };
    await feed(0, 100_000);
    gc();
    const warm = process.memoryUsage().heapUsed;
    // CPU time, not wall time: a loaded machine starves the process, it does not make it work more.
    const started = process.cpuUsage();
    await feed(100_000, 2_100_000);
    const spent = process.cpuUsage(started);
    const cpuMs = (spent.user + spent.system) / 1000;
    gc();
    const after = process.memoryUsage().heapUsed;
    expect(store.size).toBeLessThanOrEqual(10_000);
    expect(after - warm).toBeLessThan(4 * 1024 * 1024); // flat: the 2M extra ids left nothing behind
    expect(cpuMs).toBeLessThan(20_000); // about 2.3 s: a claim that scanned the store would take hours
  });

  it('rejects a bad maxEntries and shows no keys when inspected', async () => {
    expect(() => new MemoryWebhookStore({ maxEntries: 1 })).toThrow(ConfigurationError);
    expect(() => new MemoryWebhookStore({ maxEntries: 1.5 })).toThrow(ConfigurationError);
    const store = new MemoryWebhookStore();
    await store.claim('payment:PAY_SECRETISH:SUCCESS', 1000);
    expect(inspect(store)).not.toContain('PAY_SECRETISH');
    expect(JSON.stringify(store)).toBe('{"name":"MemoryWebhookStore","size":1,"maxEntries":100000}');
    store.clear();
    expect(store.size).toBe(0);
  });
});
