/**
 * runOnce's onError may be async: a logger that rejects never becomes an unhandled rejection
 * (it would crash a process run with --unhandled-rejections=throw, Node's default).
 */
import { expect, it } from 'vitest';
import { MemoryWebhookStore, runOnce } from '../../../src/webhooks/index.js';

it('swallows an onError that rejects, and still reports the work failure', async () => {
  const unhandled: unknown[] = [];
  const onUnhandled = (reason: unknown) => unhandled.push(reason);
  process.on('unhandledRejection', onUnhandled);
  try {
    const inner = new MemoryWebhookStore();
    const store = {
      ...inner,
      claim: inner.claim.bind(inner),
      complete: inner.complete.bind(inner),
      release: () => Promise.reject(new Error('store down')),
    };
    const outcome = await runOnce(
      store,
      'payment:PAY_1:SUCCESS',
      () => {
        throw new Error('fulfilment failed');
      },
      { onError: async () => Promise.reject(new Error('logger down')) },
    ).catch((error: unknown) => error);
    expect(outcome).toMatchObject({ name: 'WebhookHandlerError', stage: 'handler' });
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(unhandled).toEqual([]);
  } finally {
    process.off('unhandledRejection', onUnhandled);
  }
});
