/**
 * Work that finished but that the store failed to record (complete failed three times) is never
 * run again in this process: runOnce and the webhook handler share one record of such keys per
 * store. Before, the claim simply expired and the next run of the reconciliation job fulfilled
 * the same payment a second time.
 */
import { expect, it } from 'vitest';
import { MemoryWebhookStore, paymentKey, runOnce } from '../../../src/webhooks/index.js';

it('work that finished is not run a second time after the store failed to record it', async () => {
  let now = 1_000_000;
  const inner = new MemoryWebhookStore({ clock: () => now });
  let failCompletes = 3; // a short Redis blip: three failed completes, then the store is fine
  const store = {
    claim: (k: string, ttl: number) => inner.claim(k, ttl),
    complete: (k: string, t: string, ttl: number) =>
      failCompletes-- > 0 ? Promise.reject(new Error('store blip')) : inner.complete(k, t, ttl),
    release: (k: string, t: string) => inner.release(k, t),
    renew: (k: string, t: string, ttl: number) => inner.renew(k, t, ttl),
  };
  let fulfilments = 0;
  const key = paymentKey('PAY_1', 'SUCCESS');
  const first = await runOnce(store, key, () => void (fulfilments += 1), { inFlightTtlMs: 60_000 });
  expect(first.outcome).toBe('processed');
  now += 61_000; // the next reconciliation pass, after the claim expired
  await runOnce(store, key, () => void (fulfilments += 1), { inFlightTtlMs: 60_000 });
  expect(fulfilments).toBe(1);
});
