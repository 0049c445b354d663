/**
 * One payment's ordered callbacks are handled one at a time on the memory store: a SUCCESS
 * delivered while the same payment's REFUNDED still runs must not run beside it (it would finish
 * after the refund), nor a REFUNDED beside its SUCCESS. The later delivery is `in_flight` (the
 * handler's 409), and the gateway's retry finds the first one done. Through `runOnce`, the
 * handler's own claim-and-run path.
 */
import { describe, expect, it } from 'vitest';
import { MemoryWebhookStore, paymentKey, runOnce } from '../../../../src/webhooks/index.js';

function gate() {
  let open!: () => void;
  const opened = new Promise<void>((resolve) => (open = resolve));
  return { open, opened };
}

const run = (
  store: MemoryWebhookStore,
  status: 'SUCCESS' | 'REFUNDED',
  work: () => unknown,
  extra: { inFlightTtlMs?: number } = {},
) =>
  runOnce(store, paymentKey('PAY_ORDER_1', status), work, { payment: { payment_id: 'PAY_ORDER_1', status }, ...extra });

describe("the memory store keeps one payment's callbacks one at a time", () => {
  it('a SUCCESS while its REFUNDED runs is in_flight and does not run; once the REFUNDED is done, it is superseded', async () => {
    const store = new MemoryWebhookStore();
    const hold = gate();
    const ran: string[] = [];
    const refunded = run(store, 'REFUNDED', async () => {
      ran.push('REFUNDED');
      await hold.opened;
    });
    expect(await run(store, 'SUCCESS', () => ran.push('SUCCESS'))).toEqual({ outcome: 'in_flight' });
    hold.open();
    expect((await refunded).outcome).toBe('processed');
    expect(await run(store, 'SUCCESS', () => ran.push('SUCCESS'))).toEqual({ outcome: 'superseded' });
    expect(ran).toEqual(['REFUNDED']);
  });

  it('a REFUNDED while its SUCCESS runs is in_flight; its retry after the SUCCESS runs it', async () => {
    const store = new MemoryWebhookStore();
    const hold = gate();
    const ran: string[] = [];
    const success = run(store, 'SUCCESS', async () => {
      await hold.opened;
      ran.push('SUCCESS');
    });
    expect(await run(store, 'REFUNDED', () => ran.push('REFUNDED'))).toEqual({ outcome: 'in_flight' });
    hold.open();
    expect((await success).outcome).toBe('processed');
    expect((await run(store, 'REFUNDED', () => ran.push('REFUNDED'))).outcome).toBe('processed');
    expect(ran).toEqual(['SUCCESS', 'REFUNDED']);
  });

  it('a run that threw frees the payment at once: the other status runs', async () => {
    const store = new MemoryWebhookStore();
    await expect(run(store, 'SUCCESS', () => Promise.reject(new Error('shipping down')))).rejects.toThrow(
      'the handler threw',
    );
    expect((await run(store, 'REFUNDED', () => 'refunded')).outcome).toBe('processed');
  });

  it('a claim never completed (its process gone) holds the payment only for its TTL', async () => {
    let now = 1_000_000;
    const store = new MemoryWebhookStore({ clock: () => now });
    const claim = await store.claim(paymentKey('PAY_ORDER_2', 'REFUNDED'), 5_000, {
      paymentId: 'PAY_ORDER_2',
      rank: 2,
    });
    expect(claim.acquired).toBe(true);
    const success = () =>
      store.claim(paymentKey('PAY_ORDER_2', 'SUCCESS'), 5_000, { paymentId: 'PAY_ORDER_2', rank: 1 });
    expect(await success()).toEqual({ acquired: false, state: 'in_flight' });
    now += 5_000;
    expect((await success()).acquired).toBe(true);
  });

  it('renewing a claim keeps its payment held; callbacks of other payments and unordered keys are not held', async () => {
    let now = 1_000_000;
    const store = new MemoryWebhookStore({ clock: () => now });
    const order = { paymentId: 'PAY_ORDER_3', rank: 2 };
    const claim = await store.claim(paymentKey('PAY_ORDER_3', 'REFUNDED'), 5_000, order);
    if (!claim.acquired) throw new Error('not claimed');
    now += 4_000;
    expect(await store.renew(paymentKey('PAY_ORDER_3', 'REFUNDED'), claim.token, 5_000)).toBe(true);
    now += 4_000;
    expect(
      await store.claim(paymentKey('PAY_ORDER_3', 'SUCCESS'), 5_000, { paymentId: 'PAY_ORDER_3', rank: 1 }),
    ).toEqual({ acquired: false, state: 'in_flight' });
    expect(
      (await store.claim(paymentKey('PAY_ORDER_4', 'SUCCESS'), 5_000, { paymentId: 'PAY_ORDER_4', rank: 1 })).acquired,
    ).toBe(true);
    expect((await store.claim('job:PAY_ORDER_3', 5_000)).acquired).toBe(true);
    expect(await store.complete(paymentKey('PAY_ORDER_3', 'REFUNDED'), claim.token, 60_000, order)).toBe(true);
    expect(
      await store.claim(paymentKey('PAY_ORDER_3', 'SUCCESS'), 5_000, { paymentId: 'PAY_ORDER_3', rank: 1 }),
    ).toEqual({ acquired: false, state: 'superseded' });
  });
});
