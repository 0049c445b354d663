/**
 * src/resources/withdrawals.ts through the client a merchant builds, with a scripted `fetch` that
 * records every request and answers from a list: the request `create` and `recover` send (the
 * spec's snake_case body, `currency` and `method` filled in), how each answer becomes a result or
 * a typed error, and the rule that money moves once: an attempt that may have reached the
 * service is never sent again (OutcomeUnknownError; `recover` is the way out), while failures
 * that certainly moved nothing are retried. The account number never comes back in clear.
 * Backoff is instant (a recording `sleep`), jitter is 0, pacing is off, each client has its own
 * token cache.
 */
import { inspect } from 'node:util';
import { describe, expect, it } from 'vitest';
import {
  AbortError,
  ConnectionError,
  DuplicateReferenceError,
  InvalidRequestError,
  InvalidResponseError,
  OutcomeUnknownError,
  PermissionDeniedError,
  ServiceUnavailableError,
  TimeoutError,
  type WithdrawalCreateParams,
} from '../../../src/index.js';
import {
  API_KEY,
  BASE,
  dropped,
  failure,
  gatewayOn,
  hang,
  json,
  never,
  scriptedFetch,
  success,
  type ScriptedAnswer,
  type ScriptedFetch,
} from '../../helpers/scripted-fetch.js';
import { caught } from '../../helpers/client.js';

const ACCOUNT = '5140123456789';
const MASKED = '****6789';

/** The withdrawal requests the fake saw (the token's left out). */
const posts = (fake: ScriptedFetch) => fake.calls().filter((r) => r.url === `${BASE}/payment/withdraw`);

const REF = 'PAYOUT7781';
const params = (over: Record<string, unknown> = {}) =>
  ({
    amount: '250.00',
    reference_id: REF,
    bank_code: 'PBBEMYKL',
    account_number: ACCOUNT,
    account_name: 'Tan Wei Ming',
    ...over,
  }) as WithdrawalCreateParams;

/** The request body the spec describes for `params()`. */
const SPEC_BODY = {
  amount: 250,
  currency: 'MYR',
  reference_id: REF,
  bank_code: 'PBBEMYKL',
  account_number: ACCOUNT,
  account_name: 'Tan Wei Ming',
  method: 'BANK',
};

const accepted = (over: Record<string, unknown> = {}) =>
  success({ payment_id: 'WD_1', reference_id: REF, status: 'PROCESSING', amount: 250, ...over });

describe('withdrawals.create: the request', () => {
  it('sends one POST /payment/withdraw with the spec’s body, currency MYR and method BANK filled in, and the bearer token', async () => {
    const fake = scriptedFetch([accepted()]);
    const { client } = gatewayOn(fake);
    await client.withdrawals.create(params());
    expect(fake.sent.map((r) => `${r.method} ${r.url}`)).toEqual([
      `POST ${BASE}/auth/token`,
      `POST ${BASE}/payment/withdraw`,
    ]);
    const [request] = posts(fake);
    expect(request?.body).toEqual(SPEC_BODY);
    // The service needs the full account number: it is masked only in what comes back.
    expect(request?.text).toContain(`"account_number":"${ACCOUNT}"`);
    expect(request?.text).toContain('"amount":250,');
    expect(request?.headers).toMatchObject({ authorization: 'Bearer tok_1', 'content-type': 'application/json' });
  });

  it('sends only the spec’s fields: given currency and method as they are, unknown keys dropped', async () => {
    const fake = scriptedFetch([accepted()]);
    const { client } = gatewayOn(fake);
    await client.withdrawals.create(
      params({ amount: 250, currency: 'MYR', method: 'BANK', callback_url: 'https://x.test/cb', note: 'rent' }),
    );
    expect(posts(fake)[0]?.body).toEqual(SPEC_BODY);
  });

  it.each<[string, Record<string, unknown>, string, string]>([
    ['an amount under 50', { amount: 49.99 }, 'INVALID_AMOUNT', 'amount'],
    ['an amount over 50,000', { amount: '50000.01' }, 'INVALID_AMOUNT', 'amount'],
    ['an amount with 3 decimals', { amount: 100.001 }, 'INVALID_AMOUNT', 'amount'],
    ['a currency other than MYR', { currency: 'USD' }, 'VALIDATION_ERROR', 'currency'],
    ['a method other than BANK', { method: 'CASH' }, 'VALIDATION_ERROR', 'method'],
    ['a reference_id with a hyphen', { reference_id: 'PAYOUT-1' }, 'VALIDATION_ERROR', 'reference_id'],
    ['a bank_code with a space', { bank_code: 'PBB EMYKL' }, 'VALIDATION_ERROR', 'bank_code'],
    ['an account_number with a space', { account_number: '5140 123456789' }, 'VALIDATION_ERROR', 'account_number'],
    ['an account_number too short', { account_number: '123' }, 'VALIDATION_ERROR', 'account_number'],
    ['a blank account_name', { account_name: ' ' }, 'VALIDATION_ERROR', 'account_name'],
    ['no account_name', { account_name: undefined }, 'VALIDATION_ERROR', 'account_name'],
  ])('refuses %s with an InvalidRequestError before anything is sent', async (_label, over, code, field) => {
    const fake = scriptedFetch();
    const { client } = gatewayOn(fake);
    const error = await caught(client.withdrawals.create(params(over)));
    expect(error).toBeInstanceOf(InvalidRequestError);
    expect(error).toMatchObject({ code, field });
    expect(error.message).toMatch(new RegExp(`^${code}: withdrawal create rejected before sending`));
    expect(JSON.stringify(error)).not.toContain(ACCOUNT);
    expect(fake.sent).toEqual([]);
  });

  it('tags a validation error with the reference_id when that one is valid', async () => {
    const { client } = gatewayOn(scriptedFetch());
    expect(await caught(client.withdrawals.create(params({ amount: 10 })))).toMatchObject({ referenceId: REF });
  });
});

describe('withdrawals.create: the answer', () => {
  it('returns the withdrawal with every account_number masked, at any depth, and the answer it came from hidden', async () => {
    const fake = scriptedFetch([
      accepted({
        currency: 'MYR',
        bank_code: 'PBBEMYKL',
        account_number: ACCOUNT,
        created_at: '2026-11-24T08:00:00.000Z',
        beneficiary: { name: 'Tan Wei Ming', account_number: ACCOUNT },
        note: `queued for ${ACCOUNT}`,
      }),
    ]);
    const { client } = gatewayOn(fake);
    const withdrawal = await client.withdrawals.create(params());
    expect(withdrawal).toEqual({
      payment_id: 'WD_1',
      reference_id: REF,
      status: 'PROCESSING',
      amount: 250,
      currency: 'MYR',
      bank_code: 'PBBEMYKL',
      account_number: MASKED,
      created_at: '2026-11-24T08:00:00.000Z',
      beneficiary: { name: 'Tan Wei Ming', account_number: MASKED },
      note: `queued for ${MASKED}`,
    });
    expect(withdrawal.lastResponse).toMatchObject({ status: 200, attempts: 1 });
    expect(JSON.stringify(withdrawal)).not.toContain(ACCOUNT);
    expect(inspect(withdrawal, { depth: null, showHidden: true })).not.toContain(ACCOUNT);
  });

  it('fills what the service did not send from the request: amount, MYR, bank and the masked account', async () => {
    const { client } = gatewayOn(scriptedFetch([success({ reference_id: REF })]));
    await expect(client.withdrawals.create(params())).resolves.toEqual({
      reference_id: REF,
      amount: 250,
      currency: 'MYR',
      bank_code: 'PBBEMYKL',
      account_number: MASKED,
    });
  });

  it('takes a code the service spells its own way (case, its own code) without refusing the accepted payout; the result carries the code sent', async () => {
    for (const spelled of ['pbbemykl', 'PBB0233']) {
      const { client } = gatewayOn(scriptedFetch([accepted({ bank_code: spelled, currency: 'myr' })]));
      await expect(client.withdrawals.create(params())).resolves.toMatchObject({
        payment_id: 'WD_1',
        bank_code: 'PBBEMYKL',
        currency: 'MYR',
      });
    }
  });

  it.each<[string, Response, string | undefined]>([
    ['a body that is not JSON', new Response('accepted', { status: 200 }), undefined],
    ['no success envelope', json(200, { reference_id: REF }), undefined],
    ['another reference_id', accepted({ reference_id: 'PAYOUT9999' }), 'reference_id'],
    [
      "no reference_id (an answer that may be another request's)",
      success({ payment_id: 'WD_1', status: 'PROCESSING', amount: 250 }),
      'reference_id',
    ],
    ['another amount', accepted({ amount: 2500 }), 'amount'],
    ['an amount that is no number', accepted({ amount: 'lots' }), 'amount'],
    ['another currency', accepted({ currency: 'USD' }), 'currency'],
  ])(
    'a 2xx with %s is an InvalidResponseError saying it may have been processed; never sent again',
    async (_label, answer, field) => {
      const fake = scriptedFetch([answer]);
      const { client } = gatewayOn(fake);
      const error = await caught(client.withdrawals.create(params()));
      expect(error).toBeInstanceOf(InvalidResponseError);
      expect(error).toMatchObject({ code: 'INVALID_RESPONSE', field, referenceId: REF });
      expect(error.message).toContain('may have been processed: Wait for the callback for reference_id');
      expect(error.message).toContain('withdrawals.recover');
      expect(posts(fake)).toHaveLength(1);
    },
  );

  it.each<[string, Response, new (...args: never[]) => Error]>([
    ['400 INVALID_BANK_CODE', failure(400, 'INVALID_BANK_CODE'), InvalidRequestError],
    ['400 INVALID_AMOUNT', failure(400, 'INVALID_AMOUNT'), InvalidRequestError],
    ['409 DUPLICATE_REFERENCE', failure(409, 'DUPLICATE_REFERENCE'), DuplicateReferenceError],
    ['403 MERCHANT_DISABLED', failure(403, 'MERCHANT_DISABLED'), PermissionDeniedError],
  ])('%s becomes its typed error with the reference, sent once', async (_label, answer, type) => {
    const fake = scriptedFetch([answer]);
    const { client } = gatewayOn(fake);
    const error = await caught(client.withdrawals.create(params()));
    expect(error).toBeInstanceOf(type);
    expect(error.referenceId).toBe(REF);
    expect(posts(fake)).toHaveLength(1);
  });

  it('masks the account number and hides the api key in a message the service sent back', async () => {
    const echo = `bank PBBEMYKL refused account ${ACCOUNT} (merchant key ${API_KEY})`;
    const { client } = gatewayOn(scriptedFetch([failure(400, 'INVALID_BANK_CODE', echo)]));
    const error = await caught(client.withdrawals.create(params()));
    expect(error.message).toContain(`account ${MASKED}`);
    for (const view of [error.message, JSON.stringify(error), inspect(error, { depth: null })]) {
      expect(view).not.toContain(ACCOUNT);
      expect(view).not.toContain(API_KEY);
    }
  });
});

describe('withdrawals.create: money moves once', () => {
  it.each<[string, ScriptedAnswer, number | undefined]>([
    ['a 500', failure(500, 'INTERNAL_ERROR'), 500],
    ['a 502 GATEWAY_ERROR', failure(502, 'GATEWAY_ERROR'), 502],
    ['a 504 GATEWAY_TIMEOUT', failure(504, 'GATEWAY_TIMEOUT'), 504],
    ['a 503 with a code other than NO_GATEWAY_AVAILABLE', failure(503, 'MAINTENANCE'), 503],
    [
      'a 502 that claims NO_GATEWAY_AVAILABLE (only a 503 proves nothing was processed)',
      failure(502, 'NO_GATEWAY_AVAILABLE'),
      502,
    ],
    ['a connection reset after sending', dropped('ECONNRESET'), undefined],
    ['a broken pipe', dropped('EPIPE'), undefined],
    ['a failure with no system code', dropped(), undefined],
  ])('after %s it is never sent again: OutcomeUnknownError pointing to recover', async (_label, answer, status) => {
    const fake = scriptedFetch([answer, accepted()]);
    const { client, sleeps } = gatewayOn(fake, { maxRetries: 10 });
    const error = await caught(client.withdrawals.create(params()));
    expect(error).toBeInstanceOf(OutcomeUnknownError);
    expect(error).toMatchObject({ code: 'OUTCOME_UNKNOWN', retryable: false, referenceId: REF, status });
    expect(error.message).toContain('not sent again: a second attempt could move money twice');
    expect(error.message).toContain('withdrawals.recover with the same params');
    expect(error.cause).toBeInstanceOf(status === undefined ? ConnectionError : ServiceUnavailableError);
    expect(posts(fake)).toHaveLength(1);
    expect(sleeps).toEqual([]);
  });

  it('an attempt that times out is not sent again either', async () => {
    const fake = scriptedFetch([hang, accepted()]);
    const { client } = gatewayOn(fake, { timeout: 5 });
    const error = await caught(client.withdrawals.create(params()));
    expect(error).toBeInstanceOf(OutcomeUnknownError);
    expect(error.cause).toBeInstanceOf(TimeoutError);
    expect(posts(fake)).toHaveLength(1);
  });

  it('an abort while the request is in flight is an OutcomeUnknownError, not a plain abort: it may have arrived', async () => {
    const controller = new AbortController();
    const fake = scriptedFetch([
      (_request, signal) => {
        const answer = never(signal);
        controller.abort();
        return answer;
      },
    ]);
    const { client } = gatewayOn(fake);
    const error = await caught(client.withdrawals.create(params(), { signal: controller.signal }));
    expect(error).toBeInstanceOf(OutcomeUnknownError);
    expect(error.referenceId).toBe(REF);
    expect(posts(fake)).toHaveLength(1);
  });

  it('an abort during a backoff before anything could be processed is a plain AbortError', async () => {
    const controller = new AbortController();
    const fake = scriptedFetch([failure(429, 'RATE_LIMITED', 'slow down', { 'retry-after': '1' })]);
    const { client } = gatewayOn(fake, {
      sleep: async () => {
        controller.abort();
        throw new Error('aborted');
      },
    });
    const error = await caught(client.withdrawals.create(params(), { signal: controller.signal }));
    expect(error).toBeInstanceOf(AbortError);
    expect(error.referenceId).toBe(REF);
    expect(posts(fake)).toHaveLength(1);
  });

  it.each<[string, ScriptedAnswer]>([
    ['a 429', failure(429, 'RATE_LIMITED', 'slow down', { 'retry-after': '1' })],
    ['a 503 NO_GATEWAY_AVAILABLE', failure(503, 'NO_GATEWAY_AVAILABLE')],
    ['a refused connection', dropped('ECONNREFUSED')],
    ['a DNS failure', dropped('ENOTFOUND')],
  ])('after %s, which certainly moved no money, it is sent again with the same body', async (_label, answer) => {
    const fake = scriptedFetch([answer, accepted()]);
    const { client, sleeps } = gatewayOn(fake);
    await expect(client.withdrawals.create(params())).resolves.toMatchObject({ reference_id: REF, amount: 250 });
    const [first, second] = posts(fake);
    expect(posts(fake)).toHaveLength(2);
    expect(second?.text).toBe(first?.text);
    expect(sleeps).toHaveLength(1);
  });

  it('an expired token is renewed and the withdrawal sent again with the new one (a 401 moved no money)', async () => {
    const fake = scriptedFetch([failure(401, 'TOKEN_EXPIRED'), accepted()]);
    const { client } = gatewayOn(fake);
    await client.withdrawals.create(params());
    expect(posts(fake).map((r) => r.headers.authorization)).toEqual(['Bearer tok_1', 'Bearer tok_2']);
  });

  it('a retry that then meets an ambiguous failure is the last attempt', async () => {
    const fake = scriptedFetch([
      failure(429, 'RATE_LIMITED', 'slow down', { 'retry-after': '1' }),
      dropped('ECONNRESET'),
      accepted(),
    ]);
    const { client } = gatewayOn(fake);
    expect(await caught(client.withdrawals.create(params()))).toBeInstanceOf(OutcomeUnknownError);
    expect(posts(fake)).toHaveLength(2);
  });
});

describe('withdrawals.recover', () => {
  it('sends the very request create sent, and reports created: true with the withdrawal when the first never arrived', async () => {
    const fake = scriptedFetch([failure(502, 'GATEWAY_ERROR'), accepted({ account_number: ACCOUNT })]);
    const { client } = gatewayOn(fake);
    expect(await caught(client.withdrawals.create(params()))).toBeInstanceOf(OutcomeUnknownError);
    const recovery = await client.withdrawals.recover(params());
    const [create, resend] = posts(fake);
    expect(resend?.text).toBe(create?.text);
    expect(resend?.body).toEqual(SPEC_BODY);
    expect(recovery).toEqual({
      created: true,
      withdrawal: expect.objectContaining({ payment_id: 'WD_1', reference_id: REF, account_number: MASKED }),
    });
  });

  it('DUPLICATE_REFERENCE means the first request arrived: created false, with the reference to await the callback for', async () => {
    const fake = scriptedFetch([failure(409, 'DUPLICATE_REFERENCE')]);
    const { client } = gatewayOn(fake);
    await expect(client.withdrawals.recover(params())).resolves.toEqual({ created: false, referenceId: REF });
    expect(posts(fake)).toHaveLength(1);
  });

  it('is retried only like create: a 429 then DUPLICATE_REFERENCE is still created false', async () => {
    const fake = scriptedFetch([
      failure(429, 'RATE_LIMITED', 'slow down', { 'retry-after': '1' }),
      failure(409, 'DUPLICATE_REFERENCE'),
    ]);
    const { client } = gatewayOn(fake);
    await expect(client.withdrawals.recover(params())).resolves.toEqual({ created: false, referenceId: REF });
    expect(posts(fake)).toHaveLength(2);
  });

  it('a recover that may have been processed is not sent again: OutcomeUnknownError once more', async () => {
    const fake = scriptedFetch([failure(504, 'GATEWAY_TIMEOUT'), accepted()]);
    const { client } = gatewayOn(fake);
    const error = await caught(client.withdrawals.recover(params()));
    expect(error).toBeInstanceOf(OutcomeUnknownError);
    expect(error.referenceId).toBe(REF);
    expect(posts(fake)).toHaveLength(1);
  });

  it('other errors are thrown with the reference, not read as an answer', async () => {
    const { client } = gatewayOn(scriptedFetch([failure(400, 'INVALID_BANK_CODE')]));
    const error = await caught(client.withdrawals.recover(params()));
    expect(error).toBeInstanceOf(InvalidRequestError);
    expect(error).toMatchObject({ code: 'INVALID_BANK_CODE', referenceId: REF });
  });

  it('refuses invalid params before anything is sent', async () => {
    const fake = scriptedFetch();
    const { client } = gatewayOn(fake);
    const error = await caught(client.withdrawals.recover(params({ amount: 10 })));
    expect(error).toBeInstanceOf(InvalidRequestError);
    expect(error).toMatchObject({ code: 'INVALID_AMOUNT', referenceId: REF });
    expect(fake.sent).toEqual([]);
  });
});
