/** The memory store takes its order of a payment's statuses from lifecycle.ts alone. */
import { expect, it } from 'vitest';
import { MemoryWebhookStore } from '../../../../src/webhooks/index.js';
import { lifecycleOrder, storeOrder } from '../../../helpers/store-ranks.js';

it('answers superseded for exactly the pairs of statuses lifecycle.ts orders', async () => {
  const order = await storeOrder(new MemoryWebhookStore(), 'PAY_RANK');
  expect(order).toEqual(lifecycleOrder());
  expect(order).toContain('REFUNDED → SUCCESS: superseded'); // the table is not trivially all "claimed"
});
