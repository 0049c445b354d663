/**
 * Demo steps for payouts and for the status query: a withdrawal and its callback, a lost
 * withdrawal answer recovered with withdrawals.recover, and a callback that never comes,
 * found through the status query after a 429 was waited out.
 */
import { MyrGatewayError, OutcomeUnknownError, type WithdrawalCreateParams } from 'myr-gateway';
import type { DemoGateway } from './gateways.js';
import type { MerchantBackend } from './merchant.js';
import { check, ringgit, say, skip, step, stepMs, timed } from './transcript.js';

const ACCOUNT = '5140123456789';

function payout(referenceId: string, amount: number): WithdrawalCreateParams {
  return {
    amount,
    reference_id: referenceId,
    bank_code: 'PBBEMYKL',
    account_number: ACCOUNT,
    account_name: 'Tan Wei Ming',
  };
}

/** A withdrawal, then its callback with the account number masked. */
export async function withdrawal(gateway: DemoGateway, merchant: MerchantBackend, runId: string): Promise<void> {
  const referenceId = `PAYOUT${runId}`;
  step(`The shop pays out ${ringgit(250)} to a bank account (${referenceId})`);
  if (!gateway.safeToPayOut)
    return skip('a withdrawal against this gateway may move real money; run the demo on the mock or --sandbox');
  merchant.orders.set(referenceId, { amount: 250, fulfilments: 0 });
  const { value: created, ms } = await timed(() => gateway.client.withdrawals.create(payout(referenceId, 250)));
  say(
    `withdrawal ${created.payment_id ?? created.withdrawal_id ?? referenceId} is ${created.status ?? '?'} (${ms} ms), account ${created.account_number ?? '(not echoed)'}`,
  );
  check(!JSON.stringify(created).includes(ACCOUNT), 'the result never holds the full account number');
  const before = merchant.answers.length;
  if (gateway.controls) {
    await gateway.controls.completeWithdrawal(referenceId, 'SUCCESS');
  } else if (gateway.buttons) {
    await gateway.buttons.completeWithdrawal(created.payment_id ?? created.withdrawal_id ?? referenceId);
    say("the sandbox's dashboard completes it");
  } else {
    return skip('the demo cannot make the bank settle it here; its callback arrives when it does');
  }
  await merchant.answered(before + 1);
  say(`gateway → callback: shop answered HTTP ${merchant.answers[before]?.status ?? '-'}`);
  const order = merchant.orders.get(referenceId);
  check(order?.payout === 'SUCCESS', `the shop recorded the payout as SUCCESS (${stepMs()} ms)`);
  check(/^\*+6789$/.test(String(order?.payoutAccount)), 'the callback carried the account number masked');
}

/** The answer to a withdrawal is lost after the gateway processed it; recover says so. */
export async function lostWithdrawalAnswer(gateway: DemoGateway, runId: string): Promise<void> {
  const referenceId = `PAYOUT${runId}L`;
  step(`The answer to a withdrawal (${referenceId}) is lost after the gateway processed it`);
  if (!gateway.controls) return skip('needs the mock to drop the connection after processing');
  const params = payout(referenceId, 120);
  gateway.controls.fault({ endpoint: 'withdraw', when: 'after', response: { type: 'networkError' } });
  try {
    await gateway.client.withdrawals.create(params);
    check(false, 'the lost answer was reported');
    return;
  } catch (error) {
    if (!(error instanceof OutcomeUnknownError)) throw error;
    say(
      `withdrawals.create threw OutcomeUnknownError (${error.code}, reference ${error.referenceId}); the SDK did not send it again`,
    );
  }
  const { value: recovery, ms } = await timed(() => gateway.client.withdrawals.recover(params));
  say(
    recovery.created
      ? `withdrawals.recover: the first request never arrived; sent now (${ms} ms)`
      : `withdrawals.recover → { created: false }: the gateway refused the same reference_id, so the first request arrived (${ms} ms)`,
  );
  const sent = gateway.controls
    .requests('withdraw')
    .filter((r) => (r.body as { reference_id?: unknown } | undefined)?.reference_id === referenceId);
  check(!recovery.created, 'recover found that the first request had arrived: wait for its callback');
  check(
    gateway.controls.withdrawalsUnder(referenceId) === 1,
    `one payout exists under ${referenceId}, not two (requests answered: ${sent.map((r) => (r.status === 0 ? 'connection dropped' : r.status)).join(', ')})`,
  );
}

/** No callback comes; the status query finds the payment paid, after waiting out a 429. */
export async function statusFallback(gateway: DemoGateway, merchant: MerchantBackend, runId: string): Promise<void> {
  const referenceId = `ORDER${runId}F`;
  step(`No callback arrives for ${referenceId}: the shop asks the status API, and is rate limited first`);
  const created = await gateway.client.payments.create({
    amount: 88,
    reference_id: referenceId,
    customer_name: 'Lim Mei Ling',
    customer_phone: '60177788899',
    payment_method: 'QR_PAYMENT',
  });
  merchant.orders.set(referenceId, { amount: created.amount, fulfilments: 0 });
  if (gateway.controls) {
    await gateway.controls.completePayment(referenceId, 'SUCCESS', { deliver: false });
    say('the customer paid, but the callback is lost on the way');
    gateway.controls.fault({ endpoint: 'payment.status', response: { type: 'rateLimit', retryAfter: 1 } });
  } else {
    skip('the 429 and the lost callback need the mock; the status query below still runs');
  }
  try {
    const { value: status, ms } = await timed(() => gateway.client.payments.retrieve(referenceId));
    const answers =
      gateway.controls
        ?.requests('payment.status')
        .slice(-2)
        .map((r) => r.status) ?? [];
    if (gateway.controls) {
      say(`GET /payment/status/${referenceId} → 429 RATE_LIMITED, Retry-After: 1`);
      say(`the SDK waited ${ms} ms in all and asked again → ${answers.at(-1) ?? '?'} ${status.status}`);
      check(
        answers.join(',') === '429,200' && ms >= 1000,
        'the 429 was waited out (at least the 1 s the gateway asked for), then answered',
      );
      if (status.status === 'SUCCESS') merchant.fulfil(referenceId, 'found by the status query');
      check(merchant.orders.get(referenceId)?.fulfilments === 1, 'the order was fulfilled from the status query');
    } else {
      say(`status query: ${status.payment_id} is ${status.status} (${ms} ms)`);
    }
  } catch (error) {
    if (!(error instanceof MyrGatewayError)) throw error;
    check(false, `the status query failed: ${error.code}: ${error.message}`);
  }
}
