import { inspect } from 'node:util';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import {
  DuplicateReferenceError,
  InvalidResponseError,
  OutcomeUnknownError,
  PaymentUrlUnavailableError,
} from '../../src/index.js';
import { createMockGateway } from '../../src/testing/index.js';
import { caught, clientFor, paymentParams, withdrawalParams } from '../helpers/client.js';
import { captureConsoleWarn, MANY_CLIENTS_WARNING } from '../helpers/warnings.js';

const mock = createMockGateway();
beforeAll(() => mock.listen());
afterEach(() => mock.reset());
afterAll(() => mock.close());
// Each test builds a client of its own (a fresh token cache): past the 20th, the process warns
// once that clients should be reused. Expected here: captured, and checked by the last test.
const consoleWarnings = captureConsoleWarn();

/**
 * A signal aborted once `happened` holds (the service stored the record and holds its answer),
 * polled every 5 ms: in flight by the service's own account, however slow the machine.
 */
function abortWhen(happened: () => boolean): AbortController {
  const controller = new AbortController();
  const watch = setInterval(() => {
    if (!happened()) return;
    clearInterval(watch);
    controller.abort();
  }, 5);
  controller.signal.addEventListener('abort', () => clearInterval(watch));
  setTimeout(() => clearInterval(watch), 10_000).unref();
  return controller;
}

describe('payment create: an answer lost after the payment was made', () => {
  // These used to throw DuplicateReferenceError, which reads as the merchant's mistake; the
  // payment is the merchant's own, so the answer is a dedicated, typed one.
  it.each([
    ['a dropped connection', { type: 'networkError' } as const],
    ['a 502', { type: 'status', status: 502, code: 'GATEWAY_ERROR' } as const],
    ['a 504', { type: 'status', status: 504, code: 'GATEWAY_TIMEOUT' } as const],
  ])(
    'after %s, the retry meets DUPLICATE_REFERENCE: the payment exists, its URL is lost, and the answer says what to do',
    async (_label, response) => {
      const { gateway } = clientFor(mock);
      const params = paymentParams('BANK_TRANSFER', 300);
      mock.fault({ endpoint: 'payment.create', when: 'after', response });
      const error = await caught(gateway.payments.create(params));
      expect(error).toBeInstanceOf(PaymentUrlUnavailableError);
      expect(error).not.toBeInstanceOf(DuplicateReferenceError);
      const lost = error as unknown as PaymentUrlUnavailableError;
      expect(lost.code).toBe('PAYMENT_URL_UNAVAILABLE');
      expect(lost.retryable).toBe(false);
      expect(lost.referenceId).toBe(params.reference_id);
      const stored = mock.getPayment(params.reference_id);
      expect(lost.existingPayment.payment_id).toBe(stored?.payment_id);
      expect(lost.existingPayment.amount).toBe(300);
      expect(lost.expiresAt).toBe(stored?.expires_at);
      expect(lost.message).toContain('new reference_id');
      expect(lost.message).toContain(`expires at ${stored?.expires_at}`);
      // the retry was refused as a duplicate: one payment exists for the reference, not two
      const creates = mock.requests.filter((r) => r.endpoint === 'payment.create');
      expect(creates).toHaveLength(2);
      expect(creates[1]?.status).toBe(409);
    },
  );

  it('when the status record does carry a payment_url, the payment is returned as created', async () => {
    const { gateway } = clientFor(mock);
    const params = paymentParams('QR_PAYMENT', 300);
    mock.fault({ endpoint: 'payment.create', when: 'after', response: { type: 'networkError' } });
    const data = {
      payment_id: 'PAY_WITHURL1',
      reference_id: params.reference_id,
      amount: 300,
      currency: 'MYR',
      status: 'PROCESSING',
      created_at: new Date().toISOString(),
      payment_url: 'https://pay.example/PAY_WITHURL1',
    };
    mock.fault({ endpoint: 'payment.status', response: { type: 'body', body: { status: 'success', data } } });
    const payment = await gateway.payments.create(params);
    expect(payment.payment_id).toBe('PAY_WITHURL1');
    expect(payment.customer_redirect_url).toBe('https://pay.example/PAY_WITHURL1');
  });

  it('a status record with a javascript: payment_url is never handed over', async () => {
    const { gateway } = clientFor(mock);
    const params = paymentParams('QR_PAYMENT', 300);
    mock.fault({ endpoint: 'payment.create', when: 'after', response: { type: 'networkError' } });
    const data = {
      payment_id: 'PAY_JS1',
      reference_id: params.reference_id,
      amount: 300,
      currency: 'MYR',
      status: 'PROCESSING',
      created_at: new Date().toISOString(),
      payment_url: 'javascript:alert(1)',
    };
    mock.fault({ endpoint: 'payment.status', response: { type: 'body', body: { status: 'success', data } } });
    const error = await caught(gateway.payments.create(params));
    expect(error).toBeInstanceOf(InvalidResponseError);
    expect(error.referenceId).toBe(params.reference_id);
  });

  it('a reference held by a withdrawal is a genuine duplicate, never presented as this payment', async () => {
    const { gateway } = clientFor(mock);
    const params = paymentParams('QR_PAYMENT', 300);
    await gateway.withdrawals.create({ ...withdrawalParams(300), reference_id: params.reference_id });
    mock.fault({ endpoint: 'payment.create', response: { type: 'status', status: 502, code: 'GATEWAY_ERROR' } });
    const error = await caught(gateway.payments.create(params));
    expect(error).toBeInstanceOf(DuplicateReferenceError);
    expect(error.message).toContain('withdrawal');
    expect(error.referenceId).toBe(params.reference_id);
  });

  it('after a timed-out attempt that the service did process, the caller learns the payment exists', async () => {
    const { gateway } = clientFor(mock);
    const params = paymentParams();
    mock.fault({ endpoint: 'payment.create', when: 'after', response: { type: 'delay', ms: 1_000 } });
    const error = await caught(gateway.payments.create(params, { timeout: 150 }));
    expect(error).toBeInstanceOf(PaymentUrlUnavailableError);
    expect((error as unknown as PaymentUrlUnavailableError).existingPayment.reference_id).toBe(params.reference_id);
  });

  it('retries that run out on another error after a processed attempt still report the existing payment', async () => {
    const { gateway } = clientFor(mock);
    const params = paymentParams();
    mock.fault({
      endpoint: 'payment.create',
      when: 'after',
      response: { type: 'status', status: 504, code: 'GATEWAY_TIMEOUT' },
    });
    mock.fault({
      endpoint: 'payment.create',
      times: 3,
      response: { type: 'status', status: 503, code: 'NO_GATEWAY_AVAILABLE' },
    });
    const error = await caught(gateway.payments.create(params));
    expect(error).toBeInstanceOf(PaymentUrlUnavailableError);
    const lost = error as unknown as PaymentUrlUnavailableError;
    expect(lost.existingPayment.payment_id).toBe(mock.getPayment(params.reference_id)?.payment_id);
    expect(lost.message).toContain('NO_GATEWAY_AVAILABLE');
    expect(mock.count('payment.create')).toBe(4);
  });

  // Used to end with the plain 502 after a lookup found nothing, i.e. "not created": a lookup
  // right after an ambiguous failure proves nothing (the service may still be processing).
  it('when a lookup finds nothing after ambiguous failures, the outcome is unknown, never "not created"', async () => {
    const { gateway } = clientFor(mock);
    const params = paymentParams();
    mock.fault({
      endpoint: 'payment.create',
      times: 4,
      response: { type: 'status', status: 502, code: 'GATEWAY_ERROR' },
    });
    const error = await caught(gateway.payments.create(params));
    expect(error).toBeInstanceOf(OutcomeUnknownError);
    expect(error.referenceId).toBe(params.reference_id);
    expect(error.message).toContain('does not prove it was not created');
    expect(error.message).toContain(`payments.create again with the same reference_id ${params.reference_id}`);
    expect(mock.count('payment.create')).toBe(4); // resent with the same reference_id, bounded by maxRetries
    expect(mock.count('payment.status')).toBe(1);
  });

  it('when the lookup itself fails, the outcome is reported unknown with the reference and what to do', async () => {
    const { gateway } = clientFor(mock, { maxRetries: 0 });
    const params = paymentParams();
    mock.fault({ endpoint: 'payment.create', when: 'after', response: { type: 'networkError' } });
    mock.fault({ endpoint: 'payment.status', response: { type: 'networkError' } });
    const error = await caught(gateway.payments.create(params));
    expect(error).toBeInstanceOf(OutcomeUnknownError);
    expect((error as unknown as OutcomeUnknownError).referenceId).toBe(params.reference_id);
    expect(error.message).toContain('same reference_id');
  });

  it('aborting a payment create in flight says the payment may exist and how to find it', async () => {
    const { gateway } = clientFor(mock);
    await gateway.payments.create(paymentParams()); // token cached
    const params = paymentParams();
    mock.fault({ endpoint: 'payment.create', when: 'after', response: { type: 'delay', ms: 1_000 } });
    const controller = abortWhen(() => mock.getPayment(params.reference_id) !== undefined);
    const error = await caught(gateway.payments.create(params, { signal: controller.signal }));
    expect(error.code).toBe('ABORTED');
    expect(error.message).toContain(`reference_id ${params.reference_id}`);
    expect(mock.getPayment(params.reference_id)).toBeDefined();
  });

  it('a DUPLICATE_REFERENCE on the first attempt is a plain duplicate: no lookup, no claim it is ours', async () => {
    const { gateway } = clientFor(mock);
    const params = paymentParams();
    await gateway.payments.create(params);
    const error = await caught(gateway.payments.create({ ...params }));
    expect(error).toBeInstanceOf(DuplicateReferenceError);
    expect(error.status).toBe(409);
    expect(error.retryable).toBe(false);
    expect((error as unknown as DuplicateReferenceError).earlierAttemptMayHaveSucceeded).toBe(false);
    expect((error as unknown as DuplicateReferenceError).existingPayment).toBeUndefined();
    expect(mock.count('payment.status')).toBe(0);
  });
});

describe('withdrawals are sent at most once once they may have reached the service', () => {
  it.each([
    ['a dropped connection after processing', { type: 'networkError' } as const],
    ['a 502', { type: 'status', status: 502, code: 'GATEWAY_ERROR' } as const],
    ['a 504', { type: 'status', status: 504, code: 'GATEWAY_TIMEOUT' } as const],
    ['a 500', { type: 'status', status: 500, code: 'INTERNAL_ERROR' } as const],
  ])('%s gives OutcomeUnknownError and no second request', async (_label, response) => {
    const { gateway, delays } = clientFor(mock);
    const params = withdrawalParams();
    mock.fault({ endpoint: 'withdraw', when: 'after', response });
    const error = await caught(gateway.withdrawals.create(params));
    expect(error).toBeInstanceOf(OutcomeUnknownError);
    expect(error.code).toBe('OUTCOME_UNKNOWN');
    expect(error.retryable).toBe(false);
    expect((error as unknown as OutcomeUnknownError).referenceId).toBe(params.reference_id);
    expect(error.message).toContain('withdrawals.recover with the same params');
    expect(error.message).not.toContain('retrieve');
    expect(mock.count('withdraw')).toBe(1);
    expect(delays).toEqual([]);
    expect(mock.getWithdrawal(params.reference_id)?.status).toBe('PROCESSING');
  });

  it('a timed-out withdrawal is not retried', async () => {
    const { gateway } = clientFor(mock);
    mock.fault({ endpoint: 'withdraw', when: 'after', response: { type: 'delay', ms: 1_000 } });
    const error = await caught(gateway.withdrawals.create(withdrawalParams(), { timeout: 150 }));
    expect(error).toBeInstanceOf(OutcomeUnknownError);
    expect(mock.count('withdraw')).toBe(1);
  });

  it('aborting a withdrawal in flight reports an unknown outcome, not a clean abort', async () => {
    const { gateway } = clientFor(mock);
    await gateway.payments.create(paymentParams()); // token cached
    mock.fault({ endpoint: 'withdraw', when: 'after', response: { type: 'delay', ms: 1_000 } });
    const params = withdrawalParams();
    const controller = abortWhen(() => mock.getWithdrawal(params.reference_id) !== undefined);
    const error = await caught(gateway.withdrawals.create(params, { signal: controller.signal }));
    expect(error).toBeInstanceOf(OutcomeUnknownError);
  });

  it.each([
    ['429', { type: 'rateLimit', retryAfter: 1 } as const],
    ['503 NO_GATEWAY_AVAILABLE', { type: 'status', status: 503, code: 'NO_GATEWAY_AVAILABLE' } as const],
    ['401 TOKEN_EXPIRED', { type: 'tokenExpired' } as const],
  ])('a %s certainly happened before processing and is retried', async (_label, response) => {
    const { gateway } = clientFor(mock);
    const params = withdrawalParams();
    mock.fault({ endpoint: 'withdraw', response });
    const withdrawal = await gateway.withdrawals.create(params);
    expect(withdrawal.reference_id).toBe(params.reference_id);
    expect(mock.count('withdraw')).toBe(2);
    expect(mock.requests.filter((r) => r.endpoint === 'withdraw' && r.status === 200)).toHaveLength(1);
  });

  it('returns the withdrawal with the account number masked', async () => {
    const { gateway } = clientFor(mock);
    const params = withdrawalParams(1234.5);
    const withdrawal = await gateway.withdrawals.create(params);
    expect(withdrawal.reference_id).toBe(params.reference_id);
    expect(withdrawal.amount).toBe(1234.5);
    expect(withdrawal.status).toBe('PROCESSING');
    expect(withdrawal.account_number).toBe('****6789');
    expect(JSON.stringify(withdrawal)).not.toContain(params.account_number);
  });

  it('masks a full account number even if the service echoes it', async () => {
    const { gateway } = clientFor(mock);
    const params = withdrawalParams();
    mock.fault({
      endpoint: 'withdraw',
      response: {
        type: 'body',
        body: {
          status: 'success',
          data: { reference_id: params.reference_id, account_number: params.account_number, status: 'PROCESSING' },
        },
      },
    });
    const withdrawal = await gateway.withdrawals.create(params);
    expect(withdrawal.account_number).toBe('****6789');
  });

  it('a withdrawal answer that does not name its reference_id is not taken as this payout: InvalidResponseError, the payout may have been made', async () => {
    const { gateway } = clientFor(mock);
    const params = withdrawalParams();
    mock.fault({
      endpoint: 'withdraw',
      response: { type: 'body', body: { status: 'success', data: { status: 'PROCESSING' } } },
    });
    await expect(gateway.withdrawals.create(params)).rejects.toMatchObject({
      code: 'INVALID_RESPONSE',
      field: 'reference_id',
      referenceId: params.reference_id,
    });
  });

  it('a withdrawal answer with only its reference_id still gives what the SDK vouches for: amount, currency, bank, masked account', async () => {
    const { gateway } = clientFor(mock);
    const params = { ...withdrawalParams(), amount: '250.50' };
    mock.fault({
      endpoint: 'withdraw',
      response: {
        type: 'body',
        body: { status: 'success', data: { status: 'PROCESSING', reference_id: params.reference_id } },
      },
    });
    const withdrawal = await gateway.withdrawals.create(params);
    expect({ ...withdrawal }).toEqual({
      status: 'PROCESSING',
      reference_id: params.reference_id,
      amount: 250.5,
      currency: 'MYR',
      bank_code: params.bank_code,
      account_number: '****6789',
    });
  });

  it('masks the account number in every nested field and string of the result', async () => {
    const { gateway } = clientFor(mock);
    const params = withdrawalParams();
    const full = params.account_number;
    const data = {
      reference_id: params.reference_id,
      status: 'PROCESSING',
      beneficiary: { account_number: full, account_name: 'Tan Wei Ming', bank: { account_number: `MY-${full}` } },
      legs: [{ account_number: full }, { note: `credit to ${full} today` }],
      account_number: '****6789',
    };
    mock.fault({ endpoint: 'withdraw', response: { type: 'body', body: { status: 'success', data } } });
    const withdrawal = await gateway.withdrawals.create(params);
    expect(JSON.stringify(withdrawal)).not.toContain(full);
    expect(withdrawal.beneficiary).toEqual({
      account_number: '****6789',
      account_name: 'Tan Wei Ming',
      bank: { account_number: '****6789' },
    });
    expect(withdrawal.legs).toEqual([{ account_number: '****6789' }, { note: 'credit to ****6789 today' }]);
    expect(withdrawal.account_number).toBe('****6789');
  });

  it.each([
    ['a refusal', { type: 'status', status: 400, code: 'INVALID_BANK_CODE' } as const, 'create'],
    [
      'an answer that leaves the outcome unknown',
      { type: 'status', status: 502, code: 'GATEWAY_ERROR' } as const,
      'create',
    ],
    ['a refusal of recover', { type: 'status', status: 400, code: 'INVALID_BANK_CODE' } as const, 'recover'],
  ])('masks the account number the service puts in the message of %s', async (_label, response, method) => {
    const { gateway } = clientFor(mock);
    const params = withdrawalParams();
    const full = params.account_number;
    mock.fault({
      endpoint: 'withdraw',
      response: { ...response, message: `account_number ${full} (Tan Wei Ming) rejected by bank; retry ${full} later` },
    });
    const error = await caught(
      method === 'create' ? gateway.withdrawals.create(params) : gateway.withdrawals.recover(params),
    );
    expect(error.message).toContain('account_number ****6789 (Tan Wei Ming) rejected by bank');
    const seen = [
      error.message,
      JSON.stringify(error),
      inspect(error),
      String((error.cause as Error | undefined)?.message),
    ];
    for (const text of seen) expect(text).not.toContain(full);
    expect(error.message).toContain('retry ****6789 later');
  });

  it('the withdrawal INVALID_BANK_CODE and INVALID_AMOUNT answers are final', async () => {
    const { gateway } = clientFor(mock);
    const bad = await caught(gateway.withdrawals.create({ ...withdrawalParams(), bank_code: 'NOSUCHBANK' }));
    expect(bad.code).toBe('INVALID_BANK_CODE');
    expect(bad.status).toBe(400);
    expect(mock.count('withdraw')).toBe(1);
  });
});

it('printed no warning but the one about the 20+ clients these tests create', () => {
  expect(consoleWarnings.lines).toEqual([expect.stringMatching(MANY_CLIENTS_WARNING)]);
});
