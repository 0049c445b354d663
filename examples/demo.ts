/**
 * End-to-end demo against the built-in mock gateway, on this machine only:
 *
 *   1. a merchant backend (Express on 127.0.0.1) mounts the callback middleware;
 *   2. it creates a QR payment through the client and gets the customer's URL;
 *   3. the customer "pays" in the mock gateway, which sends a signed callback;
 *   4. the middleware verifies it, confirms it through the status API and fulfils the order
 *      exactly once, even when the gateway delivers the callback twice;
 *   5. a forged callback is refused.
 *
 * Run: npm run demo. Exits non-zero if any step does not behave as described.
 */
import type { AddressInfo } from 'node:net';
import express from 'express';
import { MyrGateway } from 'myr-gateway';
import { createMockGateway } from 'myr-gateway/testing';
import { confirmDeposit, createExpressMiddleware, type WebhookEvent } from 'myr-gateway/webhooks';

const merchantId = 'MERCHANT_DEMO';
const apiKey = 'sk_demo_7f3a9c21b84e4d0f'; // issued out of band by the gateway

function step(text: string) {
  console.log(`\n▶ ${text}`);
}
function check(ok: boolean, what: string): void {
  console.log(`  ${ok ? '✓' : '✗'} ${what}`);
  if (!ok) process.exitCode = 1;
}

// --- the merchant's order book -------------------------------------------------------------
const orders = new Map<string, { amount: number; paid: boolean; fulfilments: number }>();

// --- 1. the merchant backend ----------------------------------------------------------------
step('Start the merchant backend (Express) with the callback middleware');
let gateway: MyrGateway | undefined;
const app = express();
app.post(
  '/webhooks/myr',
  createExpressMiddleware({
    verifier: { apiKey },
    async onEvent(event: WebhookEvent) {
      if (event.transaction_type !== 'DEPOSIT' || event.signed.status !== 'SUCCESS') return;
      const order = orders.get(event.signed.reference_id);
      if (!order) throw new Error('unknown order'); // 5xx: the gateway retries
      const confirmation = await confirmDeposit(event, gateway as MyrGateway, { amount: order.amount });
      if (!confirmation.confirmed) throw new Error(`not confirmed: ${confirmation.mismatches.join(', ')}`);
      order.paid = true;
      order.fulfilments += 1;
      console.log(`  → order ${event.signed.reference_id} fulfilled (${event.signed.amount} ${event.signed.currency})`);
    },
    onError(error) {
      console.log(`  → callback refused: ${error.code}${'reason' in error ? ` (${String(error.reason)})` : ''}`);
    },
  }),
);
const server = app.listen(0, '127.0.0.1');
await new Promise((resolve) => server.once('listening', resolve));
const callbackUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/webhooks/myr`;
console.log(`  listening: ${callbackUrl} (registered as the merchant's default callback URL)`);

// --- the gateway (mock) ---------------------------------------------------------------------
const mock = createMockGateway({ merchants: [{ merchantId, apiKey, defaultCallbackUrl: callbackUrl }] });
mock.listen();

try {
  gateway = new MyrGateway({ baseUrl: mock.baseUrl, merchantId, apiKey });

  // --- 2. create the payment ------------------------------------------------------------------
  step('Create a QR payment');
  const referenceId = `ORDER${Date.now()}`;
  orders.set(referenceId, { amount: 149.9, paid: false, fulfilments: 0 });
  const payment = await gateway.payments.create({
    amount: 149.9,
    reference_id: referenceId,
    customer_name: 'Aisyah Rahman',
    customer_phone: '60123456789',
    payment_method: 'QR_PAYMENT',
  });
  console.log(`  payment ${payment.payment_id} is ${payment.status}; send the customer to ${payment.customer_redirect_url}`);
  check(payment.customer_redirect_url === payment.payment_url, 'QR payments send the customer to payment_url');

  // --- 3. the customer pays; the gateway calls back (twice, as gateways may) -------------------
  step('The customer pays; the gateway sends the signed callback, then the same delivery again');
  const delivery = await mock.completePayment(payment.payment_id, 'SUCCESS', { duplicate: true });
  for (const attempt of delivery.attempts) console.log(`  callback ${delivery.webhookId} answered HTTP ${attempt.status ?? attempt.error}`);
  check(delivery.delivered, 'the callback was acknowledged with a 2xx');
  check(orders.get(referenceId)?.fulfilments === 1, 'the order was fulfilled exactly once');

  // --- 4. the status API agrees ------------------------------------------------------------------
  step('Ask the status API (the fallback when no callback arrives)');
  const status = await gateway.payments.retrieve(referenceId);
  console.log(`  ${status.payment_id}: ${status.status}, completed_at ${status.completed_at}`);
  check(status.status === 'SUCCESS', 'the status API reports SUCCESS');

  // --- 5. a forged callback --------------------------------------------------------------------
  step('Someone forges a callback for a second order (amount changed after signing)');
  const second = `ORDER${Date.now()}B`;
  orders.set(second, { amount: 10, paid: false, fulfilments: 0 });
  const other = await gateway.payments.create({ amount: 10, reference_id: second, customer_name: 'Tan Wei Ming', customer_phone: '60198765432', payment_method: 'MOBILE_WALLET' });
  const forged = await mock.completePayment(other.payment_id, 'SUCCESS', {
    tamper: (body) => ({ ...body, amount: 0.01 }),
    retryDelaysMs: [],
  });
  check(forged.attempts[0]?.status === 401, 'the forged callback was refused with 401');
  check(orders.get(second)?.fulfilments === 0, 'nothing was fulfilled for it');
} finally {
  mock.close();
  await new Promise((resolve) => server.close(resolve));
}

console.log(process.exitCode ? '\nDemo FAILED' : '\nDemo finished: payment created, paid, callback verified, order fulfilled once.');
