/**
 * The merchant's side of the demo: an order book and an Express app on 127.0.0.1 whose
 * callback route is the SDK's middleware. Every answer it gives the gateway is kept in
 * `answers` so the transcript can show what happened to each delivery.
 */
import type { AddressInfo } from 'node:net';
import express from 'express';
import type { MyrGateway } from 'myr-gateway';
import {
  confirmDeposit,
  createExpressMiddleware,
  createWebhookHandler,
  type WebhookEvent,
  type WebhookHandler,
  type WebhookOutcome,
} from 'myr-gateway/webhooks';
import { ringgit, say } from './transcript.js';

/** An order of the merchant's shop. */
export interface Order {
  amount: number;
  fulfilments: number;
  payout?: string;
  /** The account a payout went to, as its callback showed it. */
  payoutAccount?: string | null;
}

/** One answer the merchant's callback route gave. */
export interface CallbackAnswer {
  status: number;
  outcome: WebhookOutcome;
  reason?: string | undefined;
}

/** The running merchant backend. */
export interface MerchantBackend {
  readonly callbackUrl: string;
  readonly orders: Map<string, Order>;
  readonly answers: CallbackAnswer[];
  /** Marks an order paid once; a second call for the same order does nothing. */
  fulfil(referenceId: string, how: string): void;
  /** Resolves once the shop has answered `count` callbacks in all (for gateways that deliver on their own). */
  answered(count: number): Promise<void>;
  close(): Promise<void>;
}

/**
 * Starts the backend. `apiKey` and `gateway` are read when the first callback arrives: the
 * callback URL must exist before the gateway (a sandbox process) does, and the deposit is
 * confirmed through the status API before goods ship.
 */
export async function startMerchant(apiKey: () => string, gateway: () => MyrGateway): Promise<MerchantBackend> {
  const orders = new Map<string, Order>();
  const answers: CallbackAnswer[] = [];

  function fulfil(referenceId: string, how: string): void {
    const order = orders.get(referenceId);
    if (!order || order.fulfilments > 0) return;
    order.fulfilments += 1;
    say(`merchant: order ${referenceId} fulfilled (${ringgit(order.amount)}, ${how})`);
  }

  async function onEvent(event: WebhookEvent): Promise<void> {
    const { signed } = event;
    if (event.transaction_type === 'WITHDRAWAL') {
      say(
        `merchant: payout ${signed.reference_id} is ${signed.status} (to ${event.unsigned.bank_code ?? '?'} account ${event.unsigned.account_number ?? '?'})`,
      );
      const order = orders.get(signed.reference_id);
      if (order) Object.assign(order, { payout: signed.status, payoutAccount: event.unsigned.account_number });
      return;
    }
    if (signed.status !== 'SUCCESS') {
      say(`merchant: payment ${signed.reference_id} is ${signed.status}; the order stays unpaid`);
      return;
    }
    const order = orders.get(signed.reference_id);
    if (!order) throw new Error('unknown order'); // a 500: the gateway retries
    const confirmation = await confirmDeposit(event, gateway(), { amount: order.amount });
    if (!confirmation.confirmed) throw new Error(`not confirmed: ${confirmation.mismatches.join(', ')}`);
    fulfil(signed.reference_id, 'signature verified, confirmed with the status API');
  }

  let handler: WebhookHandler | undefined;
  const current = () => (handler ??= createWebhookHandler({ verifier: { apiKey: apiKey() }, onEvent }));
  // The middleware answers the gateway; this wrapper only notes each answer for the transcript.
  const logged: WebhookHandler = {
    get verifier() {
      return current().verifier;
    },
    get store() {
      return current().store;
    },
    async handle(request) {
      const response = await current().handle(request);
      answers.push({ status: response.status, outcome: response.body.outcome, reason: response.body.reason });
      return response;
    },
  };

  const app = express();
  app.post('/webhooks/myr', createExpressMiddleware(logged));
  const server = app.listen(0, '127.0.0.1');
  await new Promise((resolve, reject) => server.once('listening', resolve).once('error', reject));
  const callbackUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/webhooks/myr`;
  return {
    callbackUrl,
    orders,
    answers,
    fulfil,
    async answered(count) {
      const deadline = Date.now() + 15_000;
      while (answers.length < count) {
        if (Date.now() > deadline)
          throw new Error(`no callback reached the shop within 15 s (${answers.length} of ${count})`);
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
