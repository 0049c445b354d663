/**
 * The sandbox's log of callback deliveries: one entry per callback (webhook_id), its
 * attempts with the merchant's answers and timings, updated live while it is delivered.
 *
 * @module
 */
import type { CallbackAttempt, CallbackDelivery } from '../testing/types/callbacks.js';
import type { MockRecord } from '../testing/state.js';

/** One callback and what happened to it. */
export interface DeliveryEntry {
  webhook_id: string;
  payment_id: string;
  reference_id: string;
  transaction_type: MockRecord['kind'];
  /** The callback's status (the record's status when it was sent). */
  status: string;
  url: string | null;
  /** When the delivery started (ms since epoch). */
  started_at: number;
  attempts: CallbackAttempt[];
  /** `sending` while attempts may follow; then `delivered`, `failed` or `no-url`. */
  state: 'sending' | 'delivered' | 'failed' | 'no-url';
  /** The body as sent, for the dashboard's details. */
  body: Record<string, unknown>;
}

/** At most this many deliveries are kept (oldest dropped), so a long session stays small. */
const MAX_ENTRIES = 500;

/** The delivery log; `onChange` fires on every update. */
export class DeliveryLog {
  private readonly entries = new Map<string, DeliveryEntry>();

  constructor(private readonly onChange: () => void) {}

  /** Newest first. */
  list(): DeliveryEntry[] {
    return [...this.entries.values()].reverse();
  }

  /** Puts back entries from a `--data` file; any left `sending` are marked failed (the process stopped). */
  restore(entries: readonly DeliveryEntry[]): void {
    this.entries.clear();
    for (const entry of entries) {
      const state = entry.state === 'sending' ? 'failed' : entry.state;
      this.entries.set(entry.webhook_id, { ...entry, attempts: [...entry.attempts], state });
    }
  }

  /** Called by the service when a delivery starts and after each attempt. */
  observe(delivery: CallbackDelivery, record: MockRecord, now: number): void {
    let entry = this.entries.get(delivery.webhookId);
    if (!entry) {
      entry = {
        webhook_id: delivery.webhookId,
        payment_id: record.payment_id,
        reference_id: record.reference_id,
        transaction_type: record.kind,
        // A `tamper` may have put anything there; the dashboard shows a status, not an object.
        status: typeof delivery.body.status === 'string' ? delivery.body.status : record.status,
        url: delivery.url,
        started_at: now,
        attempts: [],
        state: delivery.url === null ? 'no-url' : 'sending',
        body: delivery.body,
      };
      this.entries.set(entry.webhook_id, entry);
      while (this.entries.size > MAX_ENTRIES) this.entries.delete(this.entries.keys().next().value as string); // size > MAX_ENTRIES > 0: there is a first key
    }
    entry.attempts = delivery.attempts.map((a) => ({ ...a }));
    if (delivery.delivered) entry.state = 'delivered';
    this.onChange();
  }

  /** Called when a delivery ended (the service's promise settled). */
  finish(delivery: CallbackDelivery): void {
    const entry = this.entries.get(delivery.webhookId);
    if (!entry) return;
    entry.attempts = delivery.attempts.map((a) => ({ ...a }));
    entry.state = delivery.url === null ? 'no-url' : delivery.delivered ? 'delivered' : 'failed';
    this.onChange();
  }
}
