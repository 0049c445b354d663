/**
 * Work that finished but that the store failed to record (complete failed three times) is never
 * run again in this process: runOnce and the webhook handler share one record of such keys per
 * store. Before, the claim simply expired and the next run of the reconciliation job fulfilled
 * the same payment a second time.
 */
import { expect, it } from 'vitest';
import { MemoryWebhookStore, paymentKey, runOnce, type PaymentOrder } from '../../../src/webhooks/index.js';

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

it('a REFUNDED recorded only on a later pass still raises its payment mark: a late SUCCESS is not fulfilled', async () => {
  const inner = new MemoryWebhookStore();
  let failCompletes = 3; // the REFUNDED run's three completes fail; the store is fine afterwards
  const store = {
    claim: (k: string, ttl: number, order?: PaymentOrder) => inner.claim(k, ttl, order),
    complete: (k: string, t: string, ttl: number, order?: PaymentOrder) =>
      failCompletes-- > 0 ? Promise.reject(new Error('store blip')) : inner.complete(k, t, ttl, order),
    release: (k: string, t: string) => inner.release(k, t),
    renew: (k: string, t: string, ttl: number) => inner.renew(k, t, ttl),
  };
  const fulfilled: string[] = [];
  const run = (status: string) =>
    runOnce(store, paymentKey('PAY_2', status), () => void fulfilled.push(status), {
      payment: { payment_id: 'PAY_2', status },
    });
  expect((await run('REFUNDED')).outcome).toBe('processed'); // done here, not recorded
  expect((await run('REFUNDED')).outcome).toBe('duplicate'); // recorded now, with its order
  expect((await run('SUCCESS')).outcome).toBe('superseded');
  expect(fulfilled).toEqual(['REFUNDED']);
});
