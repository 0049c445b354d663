/**
 * Demo steps for deposits: one payment per method, the customer pays / is declined / lets one
 * expire, a duplicate delivery and a forged callback.
 */
import type { PaymentCreated, PaymentCreateParams, PaymentMethod } from 'myr-gateway';
import { signCallback, type CallbackDelivery } from 'myr-gateway/testing';
import type { DemoGateway } from './gateways.js';
import type { MerchantBackend } from './merchant.js';
import { check, ringgit, say, skip, step, stepMs, timed } from './transcript.js';

/** The three payments of the demo, by method. */
export type DemoPayments = Record<PaymentMethod, PaymentCreated>;

const CUSTOMER = { customer_name: 'Aisyah Rahman', customer_phone: '60123456789' };
const NEEDS_CONTROL = 'on this gateway the demo cannot act as the customer';

function paramsFor(method: PaymentMethod, referenceId: string): PaymentCreateParams {
  if (method === 'BANK_TRANSFER') {
    return {
      ...CUSTOMER,
      amount: '250.00',
      reference_id: referenceId,
      payment_method: method,
      metadata: { provider_channel_id: 'MB2U0227' },
    };
  }
  return {
    ...CUSTOMER,
    amount: method === 'QR_PAYMENT' ? '149.90' : 35,
    reference_id: referenceId,
    payment_method: method,
  };
}

/** Creates one payment per method and shows where each customer is sent. */
export async function createPayments(
  gateway: DemoGateway,
  merchant: MerchantBackend,
  runId: string,
): Promise<DemoPayments> {
  step('The shop creates one payment per method and sends each customer to its page');
  const created: Partial<DemoPayments> = {};
  for (const method of ['QR_PAYMENT', 'BANK_TRANSFER', 'MOBILE_WALLET'] as const) {
    const referenceId = `ORDER${runId}${method.slice(0, 1)}`;
    const { value: payment, ms } = await timed(() => gateway.client.payments.create(paramsFor(method, referenceId)));
    merchant.orders.set(referenceId, { amount: payment.amount, fulfilments: 0 });
    created[method] = payment;
    const source = method === 'QR_PAYMENT' ? 'payment_url' : 'gateway.redirect_url';
    say(
      `${method.padEnd(13)} ${referenceId}  ${ringgit(payment.amount)}  ${payment.payment_id}  ${payment.status}  (${ms} ms)`,
    );
    say(`${''.padEnd(13)} customer → ${payment.customer_redirect_url}  (${source})`);
    const expected = method === 'QR_PAYMENT' ? payment.payment_url : payment.gateway.redirect_url;
    check(
      payment.customer_redirect_url === expected,
      `${method}: the customer is sent to ${source}, as the spec's table says`,
    );
  }
  return created as DemoPayments;
}

function describeDelivery(delivery: CallbackDelivery, merchant: MerchantBackend, answersBefore: number): void {
  const answers = merchant.answers.slice(answersBefore);
  delivery.attempts.forEach((attempt, i) => {
    const answer = answers[i];
    const what = answer
      ? `${answer.outcome}${answer.reason ? `: ${answer.reason}` : ''}`
      : (attempt.error ?? 'no answer');
    say(
      `gateway → callback ${delivery.webhookId.slice(0, 8)}…${attempt.duplicate ? ' (same delivery again)' : ''}: HTTP ${attempt.status ?? '-'} (${what})`,
    );
  });
}

/** The shop's answers from `from` on, for a gateway whose deliveries the demo does not see. */
function describeAnswers(merchant: MerchantBackend, from: number): void {
  for (const answer of merchant.answers.slice(from)) {
    say(
      `gateway → callback: shop answered HTTP ${answer.status} (${answer.outcome}${answer.reason ? `: ${answer.reason}` : ''})`,
    );
  }
}

/** The customer presses an outcome button on the sandbox's page; resolves once the shop answered the callback. */
async function pressInSandbox(
  gateway: DemoGateway,
  merchant: MerchantBackend,
  paymentId: string,
  outcome: 'pay' | 'decline' | 'expire',
): Promise<void> {
  const before = merchant.answers.length;
  await gateway.buttons?.press(paymentId, outcome);
  say(`the customer pressed "${outcome}" on the sandbox's hosted page`);
  await merchant.answered(before + 1);
  describeAnswers(merchant, before);
}

/** The QR customer pays; the gateway delivers the callback twice; the order ships once. */
export async function customerPays(
  gateway: DemoGateway,
  merchant: MerchantBackend,
  payments: DemoPayments,
): Promise<CallbackDelivery | undefined> {
  const payment = payments.QR_PAYMENT;
  step(
    `The customer pays ${payment.reference_id} (QR); the gateway sends the signed callback, then the same delivery again`,
  );
  const before = merchant.answers.length;
  let delivery: CallbackDelivery | undefined;
  if (gateway.controls) {
    delivery = await gateway.controls.completePayment(payment.payment_id, 'SUCCESS', { duplicate: true });
    describeDelivery(delivery, merchant, before);
  } else if (gateway.buttons) {
    await pressInSandbox(gateway, merchant, payment.payment_id, 'pay');
    await gateway.buttons.resend(payment.payment_id);
    say("the sandbox's dashboard resends the callback");
    await merchant.answered(before + 2);
    describeAnswers(merchant, before + 1);
  } else {
    return void skip(`${NEEDS_CONTROL}: open the QR URL above and pay there`);
  }
  const answers = merchant.answers.slice(before);
  check(
    answers.length === 2 && answers.every((a) => a.status === 200),
    'both deliveries were acknowledged with 200, so the gateway stops sending',
  );
  check(
    answers[1]?.outcome === 'duplicate',
    'the second delivery was recognised as a duplicate: the handler did not run again',
  );
  check(
    merchant.orders.get(payment.reference_id)?.fulfilments === 1,
    `order ${payment.reference_id} was fulfilled exactly once (${stepMs()} ms)`,
  );
  return delivery;
}

/** The bank declines the BANK_TRANSFER payment. */
export async function bankDeclines(
  gateway: DemoGateway,
  merchant: MerchantBackend,
  payments: DemoPayments,
): Promise<void> {
  const payment = payments.BANK_TRANSFER;
  step(`The bank declines ${payment.reference_id} (BANK_TRANSFER)`);
  const before = merchant.answers.length;
  if (gateway.controls) {
    describeDelivery(await gateway.controls.completePayment(payment.payment_id, 'FAILED'), merchant, before);
  } else if (gateway.buttons) {
    await pressInSandbox(gateway, merchant, payment.payment_id, 'decline');
  } else {
    return skip(NEEDS_CONTROL);
  }
  check(merchant.answers[before]?.status === 200, 'the FAILED callback was verified and acknowledged');
  check(
    merchant.orders.get(payment.reference_id)?.fulfilments === 0,
    `order ${payment.reference_id} was not fulfilled (${stepMs()} ms)`,
  );
}

/** Nobody pays the MOBILE_WALLET payment; once past expires_at the status query says EXPIRED. */
export async function paymentExpires(
  gateway: DemoGateway,
  merchant: MerchantBackend,
  payments: DemoPayments,
): Promise<void> {
  const payment = payments.MOBILE_WALLET;
  step(`Nobody pays ${payment.reference_id} (MOBILE_WALLET): it expires`);
  if (gateway.buttons) {
    await pressInSandbox(gateway, merchant, payment.payment_id, 'expire');
    const status = await gateway.client.payments.retrieve(payment.reference_id);
    say(`status query: ${status.payment_id} is ${status.status}`);
    check(status.status === 'EXPIRED', `the payment reads as EXPIRED; the order stays unpaid (${stepMs()} ms)`);
    return;
  }
  if (!gateway.controls) return skip(`${NEEDS_CONTROL} or move its clock; it expires at ${payment.expires_at ?? '?'}`);
  const ttl = payment.expires_in ?? 900;
  gateway.controls.setClockOffset((ttl + 1) * 1000);
  say(`the mock gateway's clock moves ${Math.round(ttl / 60)} min ahead, past expires_at ${payment.expires_at ?? '?'}`);
  try {
    const status = await gateway.client.payments.retrieve(payment.reference_id);
    say(`status query: ${status.payment_id} is ${status.status}`);
    check(status.status === 'EXPIRED', `the payment reads as EXPIRED; the order stays unpaid (${stepMs()} ms)`);
  } finally {
    gateway.controls.setClockOffset(0);
  }
}

/** A callback whose amount was changed after signing (or signed with another key) is refused. */
export async function forgedCallback(
  merchant: MerchantBackend,
  payments: DemoPayments,
  genuine: CallbackDelivery | undefined,
): Promise<void> {
  const target = payments.MOBILE_WALLET;
  step(`Someone posts a forged SUCCESS callback for ${target.reference_id} to the shop`);
  let body: string;
  let headers: Record<string, string>;
  if (genuine) {
    say('a genuine callback, replayed with payment_id, reference_id and amount changed after signing');
    body = JSON.stringify({
      ...genuine.body,
      payment_id: target.payment_id,
      reference_id: target.reference_id,
      amount: 0.01,
    });
    headers = { ...genuine.headers, 'X-Payment-ID': target.payment_id };
  } else {
    say("a callback signed with a key that is not the merchant's");
    const forged = await signCallback('sk_not_the_merchants_key', {
      payment_id: target.payment_id,
      reference_id: target.reference_id,
      amount: target.amount,
      status: 'SUCCESS',
    });
    body = forged.rawBody;
    headers = forged.headers;
  }
  const { value: response, ms } = await timed(() => fetch(merchant.callbackUrl, { method: 'POST', headers, body }));
  const answer = merchant.answers.at(-1);
  say(`shop answered HTTP ${response.status} (${answer?.outcome ?? '?'}: ${answer?.reason ?? '?'}) in ${ms} ms`);
  check(response.status === 401, 'the forged callback was refused with 401');
  check(merchant.orders.get(target.reference_id)?.fulfilments === 0, 'nothing was fulfilled for it');
}
