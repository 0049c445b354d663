/**
 * Whether a webhook store orders a payment's statuses exactly as src/webhooks/lifecycle.ts
 * does: for every pair of statuses (every status the service reports, and one it does not
 * yet), a claim after a completion answers `superseded` exactly when `isSuperseded` says so.
 * A store with a rank rule of its own fails it as soon as lifecycle.ts changes.
 */
import { PAYMENT_STATUSES } from '../../src/schemas/statuses.js';
import { isSuperseded, lifecycleRank, type WebhookStore } from '../../src/webhooks/index.js';

const STATUSES = [...PAYMENT_STATUSES, 'SOMETHING_NEW'];

/** One line per pair: `completed → incoming: superseded|claimed`, as the store answered it. */
export async function storeOrder(store: WebhookStore, payments: string): Promise<string[]> {
  const lines: string[] = [];
  let n = 0;
  for (const completed of STATUSES) {
    for (const incoming of STATUSES) {
      const paymentId = `${payments}_${++n}`;
      const first = await store.claim(`payment:${paymentId}:${completed}`, 60_000, {
        paymentId,
        rank: lifecycleRank(completed),
      });
      if (!first.acquired) throw new Error(`the first claim of ${paymentId} was not acquired`);
      await store.complete(`payment:${paymentId}:${completed}`, first.token, 60_000, {
        paymentId,
        rank: lifecycleRank(completed),
      });
      // Another key for the same payment, so an equal status meets the mark and not its own done record.
      const late = await store.claim(`webhook:${paymentId}:${incoming}`, 60_000, {
        paymentId,
        rank: lifecycleRank(incoming),
      });
      lines.push(
        `${completed} → ${incoming}: ${!late.acquired && late.state === 'superseded' ? 'superseded' : 'claimed'}`,
      );
    }
  }
  return lines;
}

/** What {@link storeOrder} must answer: lifecycle.ts's order. */
export function lifecycleOrder(): string[] {
  return STATUSES.flatMap((completed) =>
    STATUSES.map(
      (incoming) => `${completed} → ${incoming}: ${isSuperseded(completed, incoming) ? 'superseded' : 'claimed'}`,
    ),
  );
}
