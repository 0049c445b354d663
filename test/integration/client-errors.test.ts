import { inspect } from 'node:util';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import {
  ApiError,
  AuthenticationError,
  DuplicateReferenceError,
  InvalidRequestError,
  InvalidResponseError,
  MemoryTokenStore,
  MyrGatewayError,
  NotFoundError,
  PermissionDeniedError,
  RateLimitError,
  ServiceUnavailableError,
} from '../../src/index.js';
import { createMockGateway } from '../../src/testing/index.js';
import { caught, clientFor, paymentParams } from '../helpers/client.js';
import { captureConsoleWarn, MANY_CLIENTS_WARNING } from '../helpers/warnings.js';

const mock = createMockGateway();
beforeAll(() => mock.listen());
afterEach(() => mock.reset());
afterAll(() => mock.close());
// Each test builds a client of its own (a fresh token cache): past the 20th, the process warns
// once that clients should be reused. Expected here: captured, and checked by the last test.
const consoleWarnings = captureConsoleWarn();

// Every row of the spec's error table, as the service answers it, mapped to a class.
const table = [
  ['UNAUTHORIZED', 401, AuthenticationError, false],
  ['TOKEN_EXPIRED', 401, AuthenticationError, true],
  ['INVALID_CREDENTIALS', 401, AuthenticationError, false],
  ['MERCHANT_DISABLED', 403, PermissionDeniedError, false],
  ['MERCHANT_LOCKED', 403, PermissionDeniedError, false],
  ['VALIDATION_ERROR', 400, InvalidRequestError, false],
  ['INVALID_AMOUNT', 400, InvalidRequestError, false],
  ['DUPLICATE_REFERENCE', 409, DuplicateReferenceError, false],
  ['MISSING_PROVIDER_CHANNEL', 400, InvalidRequestError, false],
  ['INVALID_PROVIDER_CHANNEL', 400, InvalidRequestError, false],
  ['INVALID_BANK_CODE', 400, InvalidRequestError, false],
  ['RATE_LIMITED', 429, RateLimitError, true],
  ['NO_GATEWAY_AVAILABLE', 503, ServiceUnavailableError, true],
  ['GATEWAY_ERROR', 502, ServiceUnavailableError, true],
  ['GATEWAY_TIMEOUT', 504, ServiceUnavailableError, true],
] as const;

// The request field each code of the table is about (undefined: no one field to fix).
const fieldOf: Record<string, string | undefined> = {
  INVALID_AMOUNT: 'amount',
  DUPLICATE_REFERENCE: 'reference_id',
  MISSING_PROVIDER_CHANNEL: 'metadata.provider_channel_id',
  INVALID_PROVIDER_CHANNEL: 'metadata.provider_channel_id',
  INVALID_BANK_CODE: 'bank_code',
};

describe('the spec error table', () => {
  it.each(table)('%s (HTTP %i) names the field to fix, when the code is about one', async (code, status) => {
    const { gateway } = clientFor(mock, { maxRetries: 0 });
    mock.fault({
      endpoint: 'payment.status',
      times: status === 401 ? 2 : 1,
      response: { type: 'status', status, code, message: `server says ${code}` },
    });
    const error = await caught(gateway.payments.retrieve('ANYREF1'));
    expect(error.field).toBe(fieldOf[code]);
    if (fieldOf[code] !== undefined) expect(JSON.parse(JSON.stringify(error))).toMatchObject({ field: fieldOf[code] });
  });

  it('a withdrawal to a bank the service does not support: INVALID_BANK_CODE names bank_code', async () => {
    const { gateway } = clientFor(mock);
    const error = await caught(
      gateway.withdrawals.create({
        amount: 250,
        reference_id: 'PAYOUTBANK1',
        bank_code: 'NOSUCHBANK',
        account_number: '5140123456789',
        account_name: 'Tan Wei Ming',
      }),
    );
    expect(error).toBeInstanceOf(InvalidRequestError);
    expect(error).toMatchObject({ code: 'INVALID_BANK_CODE', field: 'bank_code', status: 400 });
  });

  it.each(table)('%s (HTTP %i) becomes %o with the right retryable flag', async (code, status, klass, retryable) => {
    const { gateway } = clientFor(mock, { maxRetries: 0 });
    // 401s are answered twice so the single refresh-and-retry also fails.
    mock.fault({
      endpoint: 'payment.status',
      times: status === 401 ? 2 : 1,
      response: { type: 'status', status, code, message: `server says ${code}` },
    });
    const error = await caught(gateway.payments.retrieve('ANYREF1'));
    expect(error).toBeInstanceOf(klass);
    expect(error).toBeInstanceOf(MyrGatewayError);
    expect(error.code).toBe(code);
    expect(error.status).toBe(status);
    expect(error.retryable).toBe(retryable);
    expect(error.message).toContain(`server says ${code}`);
    expect(error.correlationId).toEqual(expect.any(String));
  });

  it('an unknown code passes through as ApiError with the status', async () => {
    const { gateway } = clientFor(mock);
    mock.fault({ endpoint: 'payment.status', response: { type: 'status', status: 418, code: 'SOMETHING_NEW' } });
    const error = await caught(gateway.payments.retrieve('ANYREF2'));
    expect(error).toBeInstanceOf(ApiError);
    expect(error.code).toBe('SOMETHING_NEW');
    expect(error.status).toBe(418);
  });

  it('a status lookup that finds nothing is NotFoundError', async () => {
    const { gateway } = clientFor(mock);
    const error = await caught(gateway.payments.retrieve('NOSUCHORDER'));
    expect(error).toBeInstanceOf(NotFoundError);
    expect(error.code).toBe('NOT_FOUND');
    expect(error.status).toBe(404);
    expect(error.retryable).toBe(false);
  });

  it('the service rejecting http:// callback URLs with 422 is an InvalidRequestError', async () => {
    const { gateway } = clientFor(mock);
    mock.fault({
      endpoint: 'payment.create',
      response: { type: 'status', status: 422, code: 'VALIDATION_ERROR', message: 'callback_url must use HTTPS' },
    });
    const error = await caught(gateway.payments.create(paymentParams()));
    expect(error).toBeInstanceOf(InvalidRequestError);
    expect(error.status).toBe(422);
  });

  it.each([
    ['a body that is not the envelope', { hello: 'world' }],
    ['a payment without payment_id', { status: 'success', data: { payment_url: 'https://x', status: 'PROCESSING' } }],
    ['a string', 'OK'],
  ])('a malformed success body (%s) is InvalidResponseError', async (_label, body) => {
    const { gateway } = clientFor(mock);
    mock.fault({ endpoint: 'payment.create', response: { type: 'body', status: 200, body } });
    const error = await caught(gateway.payments.create(paymentParams()));
    expect(error).toBeInstanceOf(InvalidResponseError);
    expect(error.code).toBe('INVALID_RESPONSE');
    // Not "the payment exists": a body that is not a success may mean it was not created.
    expect(error.message).toContain('may have been created');
    expect(error.message).toContain('payments.create again with the same reference_id');
    expect(error.referenceId).toMatch(/^ORDER/);
    expect(mock.count('payment.create')).toBe(1);
  });

  it('a withdrawal answered 2xx with a malformed body is not resent and says it was accepted', async () => {
    const { gateway } = clientFor(mock);
    mock.fault({ endpoint: 'withdraw', response: { type: 'body', status: 200, body: '<html>ok</html>' } });
    const error = await caught(
      gateway.withdrawals.create({
        amount: 60,
        reference_id: 'WDMALFORMED1',
        bank_code: 'PBBEMYKL',
        account_number: '5140123456789',
        account_name: 'A',
      }),
    );
    expect(error).toBeInstanceOf(InvalidResponseError);
    expect(error.retryable).toBe(false);
    expect(error.message).toContain('send no new withdrawal');
    expect(error.message).toContain('withdrawals.recover');
    expect(error.message).not.toContain('retrieve');
    expect(error.referenceId).toBe('WDMALFORMED1');
    expect(mock.count('withdraw')).toBe(1);
  });

  it('a created payment whose answer lacks echo fields is still a created payment, filled from the request', async () => {
    const { gateway } = clientFor(mock);
    const params = paymentParams('MOBILE_WALLET', 77.7);
    mock.fault({
      endpoint: 'payment.create',
      response: {
        type: 'body',
        body: { status: 'success', data: { payment_id: 'PAY_MIN1', payment_url: 'https://pay.example/PAY_MIN1' } },
      },
    });
    const payment = await gateway.payments.create(params);
    expect(payment).toMatchObject({
      payment_id: 'PAY_MIN1',
      amount: 77.7,
      reference_id: params.reference_id,
      currency: 'MYR',
      status: 'PROCESSING',
    });
    expect(payment.customer_redirect_url).toBe('https://pay.example/PAY_MIN1');
  });

  it('tolerates unknown extra fields in a success body', async () => {
    const { gateway } = clientFor(mock);
    const created = await gateway.payments.create(paymentParams());
    mock.fault({
      endpoint: 'payment.status',
      response: {
        type: 'body',
        body: {
          status: 'success',
          data: {
            payment_id: created.payment_id,
            reference_id: created.reference_id,
            amount: 120.5,
            currency: 'MYR',
            status: 'SUCCESS',
            gateway_reference: 'GW1',
            created_at: '2026-11-22T00:00:00Z',
            completed_at: null,
            expires_at: null,
            brand_new_field: { x: 1 },
          },
        },
      },
    });
    const status = await gateway.payments.retrieve(created.payment_id);
    expect(status.status).toBe('SUCCESS');
    expect(status.brand_new_field).toEqual({ x: 1 });
  });
});

describe('secrets never leak', () => {
  const apiKey = mock.merchant.apiKey;

  function expectNoSecrets(value: unknown, secrets: string[]) {
    const views = [inspect(value, { depth: 10, showHidden: true }), JSON.stringify(value) ?? '', String(value)];
    if (value instanceof Error) views.push(value.message, value.stack ?? '', inspect(value.cause, { depth: 10 }));
    for (const view of views) for (const secret of secrets) expect(view).not.toContain(secret);
  }

  it('the client shows neither the api_key nor its token', async () => {
    const { gateway } = clientFor(mock);
    await gateway.payments.create(paymentParams());
    const token = mock.requests.find((r) => r.endpoint === 'payment.create')?.headers.authorization?.slice(7) as string;
    expect(token.length).toBeGreaterThan(8);
    expectNoSecrets(gateway, [apiKey, token]);
    expectNoSecrets(gateway.payments, [apiKey, token]);
  });

  it('errors from every path show no secrets, even when the service echoes them', async () => {
    const { gateway } = clientFor(mock, { maxRetries: 1 });
    await gateway.payments.create(paymentParams());
    const token = mock.requests.find((r) => r.endpoint === 'payment.create')?.headers.authorization?.slice(7) as string;
    const errors: unknown[] = [];
    mock.fault({
      endpoint: 'payment.status',
      response: {
        type: 'status',
        status: 400,
        code: 'VALIDATION_ERROR',
        message: `bad key ${apiKey} and token ${token}`,
      },
    });
    errors.push(await caught(gateway.payments.retrieve('X1')));
    mock.fault({ endpoint: 'payment.status', times: 2, response: { type: 'networkError' } });
    errors.push(await caught(gateway.payments.retrieve('X2')));
    mock.fault({ endpoint: 'withdraw', when: 'after', response: { type: 'networkError' } });
    errors.push(
      await caught(
        gateway.withdrawals.create({
          amount: 60,
          reference_id: 'W1',
          bank_code: 'PBBEMYKL',
          account_number: '5140123456789',
          account_name: 'A',
        }),
      ),
    );
    const badKey = clientFor(mock, { apiKey: `${apiKey}X` }).gateway;
    errors.push(await caught(badKey.payments.retrieve('X3')));
    for (const error of errors) expectNoSecrets(error, [apiKey, token, '5140123456789']);
    expect((errors[0] as Error).message).toContain('[redacted]');
  });

  it('a token taken from a shared store is redacted too', async () => {
    const store = new MemoryTokenStore();
    await clientFor(mock, { tokenStore: store }).gateway.payments.create(paymentParams());
    const second = clientFor(mock, { tokenStore: store }).gateway; // never fetched a token itself
    const token = mock.requests.find((r) => r.endpoint === 'payment.create')?.headers.authorization?.slice(7) as string;
    mock.fault({
      endpoint: 'payment.status',
      response: { type: 'status', status: 400, code: 'VALIDATION_ERROR', message: `header was Bearer ${token}` },
    });
    const error = await caught(second.payments.retrieve('X4'));
    expect(mock.count('auth')).toBe(1);
    expectNoSecrets(error, [token]);
    expect(error.message).toContain('Bearer [redacted]');
  });
});

it('printed no warning but the one about the 20+ clients these tests create', () => {
  expect(consoleWarnings.lines).toEqual([expect.stringMatching(MANY_CLIENTS_WARNING)]);
});
