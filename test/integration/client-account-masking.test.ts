/**
 * Issue 22, "account numbers survive in results and errors": the account number a withdrawal
 * sends never comes back in clear from the SDK, wherever its digits appear in the service's
 * answer: under another key, as a JSON number, in an array, in free text with separators, in an
 * error or an OUTCOME_UNKNOWN message, and in what the client logs, hooks and traces. Through
 * the client a merchant builds, on a scripted fetch.
 */
import { inspect } from 'node:util';
import { afterEach, describe, expect, it } from 'vitest';
import { MyrGateway, OutcomeUnknownError, type WithdrawalCreateParams } from '../../src/index.js';
import { expectNoSecret, observeCapture } from '../helpers/observe-capture.js';
import { failure, gatewayOptions, scriptedFetch, success, type ScriptedAnswer } from '../helpers/scripted-fetch.js';

const ACCOUNT = '5140123456789';
const MASKED = '****6789';
const REF = 'PAYOUT4410';
const params = (account = ACCOUNT): WithdrawalCreateParams => ({
  amount: '250.00',
  reference_id: REF,
  bank_code: 'PBBEMYKL',
  account_number: account,
  account_name: 'Tan Wei Ming',
});

let capture: ReturnType<typeof observeCapture> | undefined;
afterEach(() => capture?.restore());

/** A client on `answers` that logs, hooks and traces everything into `capture`. */
function observed(answers: ScriptedAnswer[]) {
  capture = observeCapture();
  return new MyrGateway(gatewayOptions(scriptedFetch(answers).fetch, capture.options));
}

/** Every view a merchant's code or their tooling may take of `value`, and everything captured. */
async function everything(value: unknown): Promise<string> {
  await capture?.flush();
  return [
    String(value),
    JSON.stringify(value),
    inspect(value, { depth: null, showHidden: true }),
    capture?.dump() ?? '',
  ].join('\n');
}

/** The account number in every form a test sends it back: its digits, and its digits grouped. */
const FORMS = { digits: ACCOUNT, spaced: '5140 1234 56789', dashed: '5140-1234-56789', dotted: '5140.1234.56789' };

describe('the account number sent, in a 2xx withdrawal result', () => {
  it('is masked under another key, as a JSON number, in an array and in free text with separators', async () => {
    const answer = new Response(
      `{"status":"success","data":{"payment_id":"WD_1","reference_id":"${REF}","status":"PROCESSING","amount":250,` +
        `"beneficiary":{"account":${ACCOUNT}},"accounts":[${ACCOUNT}],"note":"to 5140 1234 56789","memo":"acct 5140-1234-56789"}}`,
      { status: 200, headers: { 'content-type': 'application/json' } },
    );
    const withdrawal = await observed([answer]).withdrawals.create(params());
    expect(withdrawal).toMatchObject({
      beneficiary: { account: MASKED },
      accounts: [MASKED],
      note: `to ${MASKED}`,
      memo: `acct ${MASKED}`,
    });
    expectNoSecret(await everything(withdrawal), FORMS);
  });

  it('an account number with leading zeros sent back as a JSON number (which drops them) is masked too', async () => {
    const answer = new Response(
      `{"status":"success","data":{"payment_id":"WD_1","reference_id":"${REF}","status":"PROCESSING","amount":250,"acct":51401234567}}`,
      {
        status: 200,
        headers: { 'content-type': 'application/json' },
      },
    );
    const withdrawal = await observed([answer]).withdrawals.create(params('0051401234567'));
    expect(withdrawal).toMatchObject({ acct: '****4567' });
    expect(JSON.stringify(withdrawal)).not.toContain('51401234567');
  });
});

describe('the account number sent, in an error', () => {
  it.each(Object.entries(FORMS))(
    'a 4xx message with it %s is masked, in the message, toJSON, inspect, logs and spans',
    async (_form, shown) => {
      const client = observed([failure(400, 'INVALID_BANK_CODE', `bank rejected account ${shown}`)]);
      const error = await client.withdrawals.create(params()).catch((e: unknown) => e);
      expect(String(error)).toContain(`bank rejected account ${MASKED}`);
      expectNoSecret(await everything(error), FORMS);
    },
  );

  it('an OUTCOME_UNKNOWN built on a 502 that names it with separators is masked, toJSON included', async () => {
    const client = observed([failure(502, 'GATEWAY_ERROR', 'bank rejected account 5140-1234-56789')]);
    const error = await client.withdrawals.create(params()).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(OutcomeUnknownError);
    expect((error as OutcomeUnknownError).toJSON().message).toContain(`account ${MASKED}`);
    expectNoSecret(await everything(error), FORMS);
  });

  it('a 2xx whose body the schema refuses does not echo it in clear', async () => {
    const client = observed([
      success({
        payment_id: 'WD_1',
        reference_id: REF,
        status: 'PROCESSING',
        amount: 'lots',
        note: 'to 5140 1234 56789',
      }),
    ]);
    const error = await client.withdrawals.create(params()).catch((e: unknown) => e);
    expectNoSecret(await everything(error), FORMS);
  });
});
