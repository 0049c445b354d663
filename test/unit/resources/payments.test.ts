/**
 * src/resources/payments.ts through the client a merchant builds, with a scripted `fetch` that
 * records every request and answers from a list: the request each method sends (path, method,
 * snake_case JSON body as the spec spells it), how each answer shape becomes a result or a
 * typed error, and what a create does after an attempt that may have created the payment (it
 * looks the payment up: reconcile.ts). Backoff is instant (a recording `sleep`), jitter is 0,
 * pacing is off and every client has its own token cache, so nothing waits and nothing is shared.
 */
import { describe, expect, it } from 'vitest';
import {
  AbortError,
  DuplicateReferenceError,
  InvalidRequestError,
  InvalidResponseError,
  NotFoundError,
  OutcomeUnknownError,
  PaymentUrlUnavailableError,
  PermissionDeniedError,
  RateLimitError,
  ServiceUnavailableError,
  type PaymentCreateParams,
} from '../../../src/index.js';
import {
  API_KEY,
  BASE,
  NOW,
  dropped,
  failure,
  gatewayOn,
  json,
  scriptedFetch,
  success,
  type ScriptedAnswer,
  type SentRequest,
} from '../../helpers/scripted-fetch.js';
import { caught } from '../../helpers/client.js';

const at = (offsetMs: number) => new Date(NOW + offsetMs).toISOString();

const REF = 'ORDER1001';
const qr = (over: Record<string, unknown> = {}) =>
  ({
    amount: 120.5,
    reference_id: REF,
    customer_name: 'Aisyah Rahman',
    customer_phone: '60123456789',
    payment_method: 'QR_PAYMENT',
    ...over,
  }) as PaymentCreateParams;
const bankTransfer = (over: Record<string, unknown> = {}) =>
  qr({ payment_method: 'BANK_TRANSFER', metadata: { provider_channel_id: 'MB2U0227' }, ...over });

/** The spec's create answer for REF. */
const created = (over: Record<string, unknown> = {}) => ({
  payment_id: 'PAY_1',
  payment_url: 'https://pay.gw.test/p/1',
  status: 'PROCESSING',
  amount: 120.5,
  currency: 'MYR',
  reference_id: REF,
  expires_in: 900,
  expires_at: at(900_000),
  gateway: { behavior: 'REDIRECT_EXTERNAL', redirect_url: 'https://bank.gw.test/auth/1', qr_data_string: null },
  ...over,
});

/** The spec's status record for REF. */
const statusRecord = (over: Record<string, unknown> = {}) => ({
  payment_id: 'PAY_1',
  reference_id: REF,
  amount: 120.5,
  currency: 'MYR',
  status: 'PROCESSING',
  gateway_reference: null,
  created_at: at(1000),
  completed_at: null,
  expires_at: at(900_000),
  ...over,
});

describe('payments.create: the request', () => {
  it('sends one POST /payment/request with the spec’s snake_case JSON body and the bearer token, after one token request', async () => {
    const fake = scriptedFetch([success(created(), 201)]);
    const { client } = gatewayOn(fake, { merchantId: 'M_PAY_TOKEN' });
    await client.payments.create(
      bankTransfer({
        amount: '120.50',
        metadata: { provider_channel_id: 'MB2U0227', cart: 'C-77' },
        callback_url: 'https://Shop.Example/webhooks/myr',
        redirect_url: 'https://shop.example/orders/ORDER1001',
      }),
    );
    const [token, request] = fake.sent;
    expect(fake.sent).toHaveLength(2);
    expect(token).toMatchObject({
      url: `${BASE}/auth/token`,
      method: 'POST',
      body: { merchant_id: 'M_PAY_TOKEN', api_key: API_KEY },
    });
    expect(token?.headers.authorization).toBeUndefined();
    expect(request).toMatchObject({ url: `${BASE}/payment/request`, method: 'POST' });
    expect(request?.headers).toMatchObject({
      authorization: 'Bearer tok_1',
      'content-type': 'application/json',
      accept: 'application/json',
    });
    // Exactly the spec's fields: the amount as a JSON number, the URLs as checked (normalised), no currency made up.
    expect(request?.body).toEqual({
      amount: 120.5,
      reference_id: REF,
      customer_name: 'Aisyah Rahman',
      customer_phone: '60123456789',
      payment_method: 'BANK_TRANSFER',
      metadata: { provider_channel_id: 'MB2U0227', cart: 'C-77' },
      callback_url: 'https://shop.example/webhooks/myr',
      redirect_url: 'https://shop.example/orders/ORDER1001',
    });
    expect(request?.text).toContain('"amount":120.5,');
  });

  it('sends currency only when the merchant gave it (otherwise the merchant’s configured currency applies)', async () => {
    const fake = scriptedFetch([success(created()), success(created({ reference_id: 'ORDER1002' }))]);
    const { client } = gatewayOn(fake);
    await client.payments.create(qr());
    await client.payments.create(qr({ reference_id: 'ORDER1002', currency: 'MYR' }));
    const [first, second] = fake.calls();
    expect(first?.body).not.toHaveProperty('currency');
    expect(second?.body).toMatchObject({ currency: 'MYR', reference_id: 'ORDER1002' });
  });

  it('reuses the token for the next call: one token request for two creates', async () => {
    const fake = scriptedFetch([success(created()), success(created({ reference_id: 'ORDER1002' }))]);
    const { client } = gatewayOn(fake);
    await client.payments.create(qr());
    await client.payments.create(qr({ reference_id: 'ORDER1002' }));
    expect(fake.sent.filter((r) => r.url.endsWith('/auth/token'))).toHaveLength(1);
    expect(fake.calls().map((r) => r.headers.authorization)).toEqual(['Bearer tok_1', 'Bearer tok_1']);
  });

  it('sends a retried create again with the same reference_id and body, after the backoff', async () => {
    const fake = scriptedFetch([failure(503, 'NO_GATEWAY_AVAILABLE'), success(created())]);
    const { client, sleeps } = gatewayOn(fake);
    const payment = await client.payments.create(qr());
    const [first, second] = fake.calls();
    expect(second?.text).toBe(first?.text);
    expect(second?.body).toMatchObject({ reference_id: REF });
    // The first backoff of the spec's guidance (1 s), without jitter at random 0.
    expect(sleeps).toEqual([1000]);
    expect(payment.lastResponse.attempts).toBe(2);
  });

  it('renews an expired token once and sends the create again with the new one', async () => {
    const fake = scriptedFetch([failure(401, 'TOKEN_EXPIRED'), success(created())]);
    const { client } = gatewayOn(fake);
    await expect(client.payments.create(qr())).resolves.toMatchObject({ payment_id: 'PAY_1' });
    expect(fake.sent.map((r) => `${r.url.slice(BASE.length)} ${r.headers.authorization ?? '-'}`)).toEqual([
      '/auth/token -',
      '/payment/request Bearer tok_1',
      '/auth/token -',
      '/payment/request Bearer tok_2',
    ]);
  });

  it.each<[string, PaymentCreateParams, string, string | undefined]>([
    ['an amount under 5', qr({ amount: 4.99 }), 'INVALID_AMOUNT', 'amount'],
    ['an amount over 50,000', qr({ amount: 50_000.01 }), 'INVALID_AMOUNT', 'amount'],
    ['an amount with 3 decimals', qr({ amount: 120.555 }), 'INVALID_AMOUNT', 'amount'],
    ['an amount in exponent form', qr({ amount: '1e3' }), 'INVALID_AMOUNT', 'amount'],
    ['a reference_id with a hyphen', qr({ reference_id: 'ORDER-1' }), 'VALIDATION_ERROR', 'reference_id'],
    ['a reference_id over 100 characters', qr({ reference_id: 'A'.repeat(101) }), 'VALIDATION_ERROR', 'reference_id'],
    ['a phone with a leading +', qr({ customer_phone: '+60123456789' }), 'VALIDATION_ERROR', 'customer_phone'],
    ['a blank customer_name', qr({ customer_name: '   ' }), 'VALIDATION_ERROR', 'customer_name'],
    ['an unknown payment_method', qr({ payment_method: 'CARD' }), 'VALIDATION_ERROR', 'payment_method'],
    ['a currency other than MYR', qr({ currency: 'USD' }), 'VALIDATION_ERROR', 'currency'],
    ['an http:// callback_url', qr({ callback_url: 'http://shop.example/cb' }), 'VALIDATION_ERROR', 'callback_url'],
    [
      'a redirect_url with a line break',
      qr({ redirect_url: 'https://shop.example/r\r\nSet-Cookie: a=b' }),
      'VALIDATION_ERROR',
      'redirect_url',
    ],
    [
      'BANK_TRANSFER without metadata',
      bankTransfer({ metadata: undefined }),
      'MISSING_PROVIDER_CHANNEL',
      'metadata.provider_channel_id',
    ],
    [
      'BANK_TRANSFER with an unknown bank',
      bankTransfer({ metadata: { provider_channel_id: 'NOPE0001' } }),
      'INVALID_PROVIDER_CHANNEL',
      'metadata.provider_channel_id',
    ],
  ])('refuses %s with an InvalidRequestError before anything is sent', async (_label, params, code, field) => {
    const fake = scriptedFetch();
    const { client } = gatewayOn(fake);
    const error = await caught(client.payments.create(params));
    expect(error).toBeInstanceOf(InvalidRequestError);
    expect(error).toMatchObject({ code, field });
    expect(error.message).toMatch(new RegExp(`^${code}: payment create rejected before sending`));
    expect(fake.sent).toEqual([]);
  });

  it('tags a validation error with the reference_id when that one is valid, so the merchant knows which order failed', async () => {
    const { client } = gatewayOn(scriptedFetch());
    expect(await caught(client.payments.create(qr({ amount: 1 })))).toMatchObject({ referenceId: REF });
    expect(
      (await caught(client.payments.create(qr({ amount: 1, reference_id: 'BAD-REF' })))).referenceId,
    ).toBeUndefined();
  });

  it.each([null, 'ORDER1', [qr()]])(
    'refuses params that are not an object (%j) before anything is sent',
    async (params) => {
      const fake = scriptedFetch();
      const { client } = gatewayOn(fake);
      const error = await caught(client.payments.create(params as unknown as PaymentCreateParams));
      expect(error).toBeInstanceOf(InvalidRequestError);
      expect(fake.sent).toEqual([]);
    },
  );

  it('with allowInsecureLoopback, sends loopback http callback and redirect URLs; any other http URL is still refused', async () => {
    const fake = scriptedFetch([success(created())]);
    const { client } = gatewayOn(fake, { allowInsecureLoopback: true });
    await client.payments.create(
      qr({ callback_url: 'http://localhost:3000/cb', redirect_url: 'http://127.0.0.1:3000/shop' }),
    );
    expect(fake.calls()[0]?.body).toMatchObject({
      callback_url: 'http://localhost:3000/cb',
      redirect_url: 'http://127.0.0.1:3000/shop',
    });
    const error = await caught(
      client.payments.create(qr({ reference_id: 'ORDER1002', callback_url: 'http://shop.example/cb' })),
    );
    expect(error).toMatchObject({ name: 'InvalidRequestError', field: 'callback_url' });
    expect(fake.calls()).toHaveLength(1);
  });
});

describe('payments.create: the answer', () => {
  it('returns the created payment with the URL to send the customer to and, hidden, the answer it came from', async () => {
    const headers = {
      'x-correlation-id': 'corr-201',
      'x-ratelimit-limit': '100',
      'x-ratelimit-remaining': '99',
      'x-ratelimit-reset': '1795507260',
    };
    const { client } = gatewayOn(scriptedFetch([success(created(), 201, headers)]));
    const payment = await client.payments.create(bankTransfer());
    expect(payment).toEqual({ ...created(), customer_redirect_url: 'https://bank.gw.test/auth/1' });
    expect(payment.lastResponse).toMatchObject({
      status: 201,
      correlationId: 'corr-201',
      attempts: 1,
      rateLimit: { limit: 100, remaining: 99, reset: 1_795_507_260 },
    });
    expect(JSON.stringify(payment)).not.toContain('lastResponse');
  });

  it('a QR payment sends the customer to its payment_url', async () => {
    const { client } = gatewayOn(scriptedFetch([success(created())]));
    expect((await client.payments.create(qr())).customer_redirect_url).toBe('https://pay.gw.test/p/1');
  });

  it('fills the fields a minimal answer leaves out from the request: the payment exists once the service said 2xx', async () => {
    const { client } = gatewayOn(
      scriptedFetch([success({ payment_id: 'PAY_1', payment_url: 'https://pay.gw.test/p/1' })]),
    );
    const payment = await client.payments.create(qr({ amount: '75.00' }));
    expect(payment).toMatchObject({
      payment_id: 'PAY_1',
      status: 'PROCESSING',
      amount: 75,
      currency: 'MYR',
      reference_id: REF,
      gateway: { behavior: 'REDIRECT_EXTERNAL', redirect_url: 'https://pay.gw.test/p/1' },
      customer_redirect_url: 'https://pay.gw.test/p/1',
    });
  });

  it('reads an amount the service sent as a decimal string as the number it is', async () => {
    const { client } = gatewayOn(scriptedFetch([success(created({ amount: '120.50' }))]));
    expect((await client.payments.create(qr())).amount).toBe(120.5);
  });

  it.each<[string, Response, string | undefined]>([
    ['a body that is not JSON', new Response('OK', { status: 200 }), undefined],
    ['no success envelope', json(200, created()), undefined],
    ['an error envelope with 200', json(200, { status: 'error', data: created() }), undefined],
    ['no payment_url', success(created({ payment_url: undefined })), 'payment_url'],
    ['an empty payment_id', success(created({ payment_id: '' })), 'payment_id'],
    ['another reference_id', success(created({ reference_id: 'ORDER9999' })), 'reference_id'],
    ['another amount', success(created({ amount: 12.05 })), 'amount'],
    ['a javascript: payment_url', success(created({ payment_url: 'javascript:alert(1)' })), 'payment_url'],
    [
      'an http:// gateway.redirect_url',
      success(created({ gateway: { redirect_url: 'http://bank.gw.test/auth/1' } })),
      'gateway.redirect_url',
    ],
  ])(
    'a 2xx with %s is an InvalidResponseError saying to create again with the same reference_id; not retried',
    async (_label, answer, field) => {
      const fake = scriptedFetch([answer]);
      const { client } = gatewayOn(fake);
      const error = await caught(client.payments.create(qr()));
      expect(error).toBeInstanceOf(InvalidResponseError);
      expect(error).toMatchObject({ code: 'INVALID_RESPONSE', field, referenceId: REF });
      expect(error.message).toContain(`may have been created: Call payments.create again with the same reference_id`);
      expect(fake.calls()).toHaveLength(1);
    },
  );

  it.each<[string, Response, new (...args: never[]) => Error, number]>([
    ['400 INVALID_AMOUNT', failure(400, 'INVALID_AMOUNT'), InvalidRequestError, 400],
    ['422 (an http URL in production)', failure(422, 'VALIDATION_ERROR'), InvalidRequestError, 422],
    ['400 MISSING_PROVIDER_CHANNEL', failure(400, 'MISSING_PROVIDER_CHANNEL'), InvalidRequestError, 400],
    ['403 MERCHANT_LOCKED', failure(403, 'MERCHANT_LOCKED'), PermissionDeniedError, 403],
    // A reference used before this call: the merchant's, not a lost answer, so nothing is looked up.
    ['409 DUPLICATE_REFERENCE on the first attempt', failure(409, 'DUPLICATE_REFERENCE'), DuplicateReferenceError, 409],
  ])(
    '%s becomes its typed error at once, with the reference: no retry, no lookup',
    async (_label, answer, type, status) => {
      const fake = scriptedFetch([answer]);
      const { client, sleeps } = gatewayOn(fake);
      const error = await caught(client.payments.create(qr()));
      expect(error).toBeInstanceOf(type);
      expect(error).toMatchObject({ status, referenceId: REF, retryable: false });
      expect(error.correlationId).toMatch(/^corr-/);
      expect(fake.calls()).toHaveLength(1);
      expect(sleeps).toEqual([]);
    },
  );

  it.each<[string, () => Response, new (...args: never[]) => Error]>([
    ['429', () => failure(429, 'RATE_LIMITED', 'slow down', { 'retry-after': '1' }), RateLimitError],
    ['503 NO_GATEWAY_AVAILABLE', () => failure(503, 'NO_GATEWAY_AVAILABLE'), ServiceUnavailableError],
  ])(
    'retries a %s that created nothing, then throws it when retries run out, without a lookup',
    async (_label, make, type) => {
      const fake = scriptedFetch([make(), make(), make()]);
      const { client, sleeps } = gatewayOn(fake, { maxRetries: 2 });
      const error = await caught(client.payments.create(qr()));
      expect(error).toBeInstanceOf(type);
      expect(error.referenceId).toBe(REF);
      expect(fake.calls().map((r) => r.method)).toEqual(['POST', 'POST', 'POST']);
      expect(sleeps).toHaveLength(2);
    },
  );
});

describe('payments.create after an attempt that may have created the payment', () => {
  const path = (r: SentRequest) => `${r.method} ${r.url.slice(BASE.length)}`;

  it.each<[string, ScriptedAnswer]>([
    ['a 502 GATEWAY_ERROR', failure(502, 'GATEWAY_ERROR')],
    ['a 504 GATEWAY_TIMEOUT', failure(504, 'GATEWAY_TIMEOUT')],
    ['a connection reset after sending', dropped('ECONNRESET')],
  ])(
    'after %s, a resend met by DUPLICATE_REFERENCE returns the payment the lost answer was about',
    async (_label, lost) => {
      const fake = scriptedFetch([
        lost,
        failure(409, 'DUPLICATE_REFERENCE'),
        success(
          statusRecord({
            payment_url: 'https://pay.gw.test/p/1',
            gateway: { redirect_url: 'https://bank.gw.test/auth/1' },
          }),
          200,
          {
            'x-correlation-id': 'corr-lookup',
          },
        ),
      ]);
      const { client } = gatewayOn(fake);
      const payment = await client.payments.create(bankTransfer());
      expect(fake.calls().map(path)).toEqual([
        'POST /payment/request',
        'POST /payment/request',
        `GET /payment/status/${REF}`,
      ]);
      expect(payment).toMatchObject({
        payment_id: 'PAY_1',
        reference_id: REF,
        amount: 120.5,
        status: 'PROCESSING',
        customer_redirect_url: 'https://bank.gw.test/auth/1',
      });
      expect(payment.lastResponse.correlationId).toBe('corr-lookup');
    },
  );

  it('looks the payment up when the retries run out after an ambiguous failure', async () => {
    const fake = scriptedFetch([
      failure(500, 'INTERNAL'),
      success(statusRecord({ payment_url: 'https://pay.gw.test/p/1' })),
    ]);
    const { client } = gatewayOn(fake, { maxRetries: 0 });
    await expect(client.payments.create(qr())).resolves.toMatchObject({
      payment_id: 'PAY_1',
      customer_redirect_url: 'https://pay.gw.test/p/1',
    });
    expect(fake.calls().map(path)).toEqual(['POST /payment/request', `GET /payment/status/${REF}`]);
  });

  it('the payment exists but its record has no payment_url: PaymentUrlUnavailableError with the record', async () => {
    const fake = scriptedFetch([
      failure(502, 'GATEWAY_ERROR'),
      failure(409, 'DUPLICATE_REFERENCE'),
      success(statusRecord()),
    ]);
    const { client } = gatewayOn(fake);
    const error = await caught(client.payments.create(qr()));
    expect(error).toBeInstanceOf(PaymentUrlUnavailableError);
    expect(error).toMatchObject({ referenceId: REF, expiresAt: at(900_000), existingPayment: { payment_id: 'PAY_1' } });
  });

  it('a lookup that finds nothing proves nothing: OutcomeUnknownError, never "not created"', async () => {
    const fake = scriptedFetch([
      failure(504, 'GATEWAY_TIMEOUT'),
      failure(409, 'DUPLICATE_REFERENCE'),
      failure(404, 'NOT_FOUND'),
    ]);
    const { client } = gatewayOn(fake);
    const error = await caught(client.payments.create(qr()));
    expect(error).toBeInstanceOf(OutcomeUnknownError);
    expect(error).toMatchObject({ code: 'OUTCOME_UNKNOWN', referenceId: REF });
    expect(error.message).toContain('does not prove it was not created');
  });

  it('a record that is not this call’s (paid, another amount) is a DuplicateReferenceError with that record', async () => {
    const old = statusRecord({
      payment_id: 'PAY_OLD',
      status: 'SUCCESS',
      amount: 75,
      created_at: at(-86_400_000),
      payment_url: 'https://pay.gw.test/p/old',
    });
    const fake = scriptedFetch([failure(502, 'GATEWAY_ERROR'), failure(409, 'DUPLICATE_REFERENCE'), success(old)]);
    const { client } = gatewayOn(fake);
    const error = await caught(client.payments.create(qr()));
    expect(error).toBeInstanceOf(DuplicateReferenceError);
    expect(error).toMatchObject({ referenceId: REF, existingPayment: { payment_id: 'PAY_OLD', status: 'SUCCESS' } });
  });

  it('an abort during the backoff after an ambiguous failure ends with AbortError and starts no lookup', async () => {
    const controller = new AbortController();
    const fake = scriptedFetch([failure(502, 'GATEWAY_ERROR')]);
    const { client } = gatewayOn(fake, {
      sleep: async () => {
        controller.abort();
        throw new Error('aborted');
      },
    });
    const error = await caught(client.payments.create(qr(), { signal: controller.signal }));
    expect(error).toBeInstanceOf(AbortError);
    expect(error.referenceId).toBe(REF);
    // The message keeps the way out: the same reference_id again, not a new one.
    expect(error.message).toContain(`same reference_id ${REF}`);
    expect(fake.calls().map(path)).toEqual(['POST /payment/request']);
  });
});

describe('payments.retrieve', () => {
  it('sends GET /payment/status/<identifier> with the bearer token and no body, and returns the record', async () => {
    const fake = scriptedFetch([
      success(statusRecord({ amount: '120.50', status: 'SUCCESS', gateway_reference: 'GW123' })),
    ]);
    const { client } = gatewayOn(fake);
    const status = await client.payments.retrieve(REF);
    const [request] = fake.calls();
    expect(request).toMatchObject({ url: `${BASE}/payment/status/${REF}`, method: 'GET', body: undefined });
    expect(request?.headers.authorization).toBe('Bearer tok_1');
    expect(request?.headers['content-type']).toBeUndefined();
    expect(status).toEqual(statusRecord({ amount: 120.5, status: 'SUCCESS', gateway_reference: 'GW123' }));
    expect(status.lastResponse).toMatchObject({ status: 200, attempts: 1 });
  });

  it('accepts an answer that matches by payment_id as well as by reference_id', async () => {
    const { client } = gatewayOn(scriptedFetch([success(statusRecord())]));
    await expect(client.payments.retrieve('PAY_1')).resolves.toMatchObject({ payment_id: 'PAY_1', reference_id: REF });
  });

  it.each(['', 'ORDER-1', 'ORDER 1', '../auth/token', 'a/b', 'ORDER1?x=1', 'x'.repeat(129), 42, undefined])(
    'refuses the identifier %j before anything is sent',
    async (identifier) => {
      const fake = scriptedFetch();
      const { client } = gatewayOn(fake);
      const error = await caught(client.payments.retrieve(identifier as string));
      expect(error).toBeInstanceOf(InvalidRequestError);
      expect(error).toMatchObject({ code: 'VALIDATION_ERROR', field: 'identifier' });
      expect(fake.sent).toEqual([]);
    },
  );

  it('a 404 with the service’s NOT_FOUND envelope is a NotFoundError', async () => {
    const { client } = gatewayOn(scriptedFetch([failure(404, 'NOT_FOUND', 'no payment matches')]));
    const error = await caught(client.payments.retrieve(REF));
    expect(error).toBeInstanceOf(NotFoundError);
    expect(error).toMatchObject({ code: 'NOT_FOUND', status: 404, retryable: false });
  });

  it('an answer about another payment is an InvalidResponseError, never that payment’s status', async () => {
    const { client } = gatewayOn(
      scriptedFetch([success(statusRecord({ payment_id: 'PAY_9', reference_id: 'ORDER9' }))]),
    );
    const error = await caught(client.payments.retrieve(REF));
    expect(error).toBeInstanceOf(InvalidResponseError);
    expect(error).toMatchObject({ field: 'reference_id' });
  });

  it.each<[string, Record<string, unknown>, string]>([
    ['no status', { status: undefined }, 'status'],
    ['an amount that is no number', { amount: 'lots' }, 'amount'],
    ['no currency', { currency: undefined }, 'currency'],
  ])('a record with %s is an InvalidResponseError naming the field', async (_label, over, field) => {
    const { client } = gatewayOn(scriptedFetch([success(statusRecord(over))]));
    const error = await caught(client.payments.retrieve(REF));
    expect(error).toBeInstanceOf(InvalidResponseError);
    expect(error.field).toBe(field);
  });

  it('follows a 429’s Retry-After before looking up again', async () => {
    const fake = scriptedFetch([
      failure(429, 'RATE_LIMITED', 'slow down', { 'retry-after': '2' }),
      success(statusRecord()),
    ]);
    const { client, sleeps } = gatewayOn(fake);
    await expect(client.payments.retrieve(REF)).resolves.toMatchObject({ payment_id: 'PAY_1' });
    // Retry-After 2 s is above the first backoff (1 s); random 0 adds no jitter.
    expect(sleeps).toEqual([2000]);
    expect(fake.calls()).toHaveLength(2);
  });

  it('retries a lookup after a 502: a status lookup moves no money', async () => {
    const fake = scriptedFetch([failure(502, 'GATEWAY_ERROR'), success(statusRecord())]);
    const { client } = gatewayOn(fake);
    await expect(client.payments.retrieve(REF)).resolves.toMatchObject({ payment_id: 'PAY_1' });
    expect(fake.calls()).toHaveLength(2);
  });
});

describe('payments.waitForCompletion', () => {
  it('polls through the client’s lookups with its sleep and jitter until the status is terminal', async () => {
    const fake = scriptedFetch([
      success(statusRecord()),
      success(statusRecord()),
      success(statusRecord({ status: 'SUCCESS' })),
    ]);
    const { client, sleeps } = gatewayOn(fake);
    const status = await client.payments.waitForCompletion(REF, { timeoutMs: 60_000, intervalMs: 2000 });
    expect(status.status).toBe('SUCCESS');
    // random 0 is the low end of the jitter: 0.75 × 2000, then 0.75 × 3000.
    expect(sleeps).toEqual([1500, 2250]);
    expect(fake.calls().map((r) => r.url)).toEqual(Array.from({ length: 3 }, () => `${BASE}/payment/status/${REF}`));
  });

  it('refuses bad options with an InvalidRequestError before any request', async () => {
    const fake = scriptedFetch();
    const { client } = gatewayOn(fake);
    const error = await caught(client.payments.waitForCompletion(REF, { timeoutMs: 0 }));
    expect(error).toBeInstanceOf(InvalidRequestError);
    expect(error.field).toBe('timeoutMs');
    expect(fake.sent).toEqual([]);
  });
});
