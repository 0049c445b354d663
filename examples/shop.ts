/**
 * Stand-ins for code your shop already has, shared by the examples: an order book, and one
 * client for the process configured from the environment (MYR_GATEWAY_BASE_URL,
 * MYR_GATEWAY_MERCHANT_ID, MYR_GATEWAY_API_KEY). Replace them with your own.
 */
import { MyrGateway } from 'myr-gateway';
import { confirmDeposit, type WebhookEvent } from 'myr-gateway/webhooks';

/** An order of your shop. */
export interface Order {
  referenceId: string;
  total: number;
  paid: boolean;
  payout?: string;
}

const book = new Map<string, Order>();

/** Your order book (in memory here; your database in real life). */
export const orders = {
  add(referenceId: string, total: number): Order {
    const order: Order = { referenceId, total, paid: false };
    book.set(referenceId, order);
    return order;
  },
  get(referenceId: string): Order | undefined {
    return book.get(referenceId);
  },
  markPaid(referenceId: string): void {
    const order = book.get(referenceId);
    if (order) order.paid = true;
  },
  markPayout(referenceId: string, status: string): void {
    const order = book.get(referenceId);
    if (order) order.payout = status;
  },
};

function setting(name: string): string {
  return process.env[name] ?? '';
}

/** The api key callbacks are signed with (your api key). */
export function apiKey(): string {
  return setting('MYR_GATEWAY_API_KEY');
}

let client: MyrGateway | undefined;

/**
 * One client for the whole process. `new MyrGateway()` reads the MYR_GATEWAY_* variables and
 * never throws for a missing one (the first call does, loudly), so importing this file needs no
 * secrets (a build step can load it).
 */
export function gateway(): MyrGateway {
  client ??= new MyrGateway(); // MYR_GATEWAY_BASE_URL, MYR_GATEWAY_MERCHANT_ID, MYR_GATEWAY_API_KEY
  return client;
}

/**
 * What every webhook example runs for a verified callback: a paid deposit is confirmed
 * through the status API (amount included) before the order ships; a payout is recorded.
 * Throwing makes the receiver answer 500, so the gateway delivers the callback again.
 */
export async function handleEvent(event: WebhookEvent, client: MyrGateway = gateway()): Promise<void> {
  if (event.transaction_type === 'WITHDRAWAL') {
    orders.markPayout(event.signed.reference_id, event.signed.status);
    return;
  }
  if (event.signed.status !== 'SUCCESS') return;
  const order = orders.get(event.signed.reference_id);
  if (!order) throw new Error(`unknown order ${event.signed.reference_id}`);
  const check = await confirmDeposit(event, client, { amount: order.total });
  if (!check.confirmed) throw new Error(`deposit not confirmed: ${check.mismatches.join(', ')}`);
  orders.markPaid(order.referenceId);
}
