/**
 * Issue 7: the advice after a withdrawal with an unknown outcome must never lead to a second
 * payout, and a 2xx answer that is not a valid success is never taken as one.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { InvalidResponseError, MyrGatewayError, NotFoundError, OutcomeUnknownError } from '../../src/index.js';
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

describe('withdrawals.recover', () => {
  it('after a lost answer, recover finds the first request arrived and sends no second payout', async () => {
    const { gateway } = clientFor(mock);
    const params = withdrawalParams();
    mock.fault({ endpoint: 'withdraw', when: 'after', response: { type: 'networkError' } });
    const lost = await caught(gateway.withdrawals.create(params));
    expect(lost).toBeInstanceOf(OutcomeUnknownError);
    expect(lost.message).toContain('withdrawals.recover with the same params');
    expect(lost.message).not.toContain('retrieve');
    const recovery = await gateway.withdrawals.recover(params);
    expect(recovery).toEqual({ created: false, referenceId: params.reference_id });
    expect(mock.count('withdraw')).toBe(2);
    expect(mock.requests.filter((r) => r.endpoint === 'withdraw' && r.status === 200)).toHaveLength(0);
    expect(mock.getWithdrawal(params.reference_id)).toBeDefined();
  });

  it('a reference names one payout for ever: recover never makes a second one under it, whatever its params or its first payout became', async () => {
    const { gateway } = clientFor(mock);
    const params = withdrawalParams();
    await gateway.withdrawals.create(params);
    await mock.completeWithdrawal(params.reference_id, 'FAILED');
    // The payout failed and its callback came: recover under the same reference makes no new one,
    // with the same params or others. A new payout needs a new reference_id (docs/withdrawals.md).
    expect(await gateway.withdrawals.recover(params)).toEqual({ created: false, referenceId: params.reference_id });
    expect(await gateway.withdrawals.recover({ ...params, amount: 999, account_number: '999988887777' })).toEqual({
      created: false,
      referenceId: params.reference_id,
    });
    expect(mock.requests.filter((r) => r.endpoint === 'withdraw' && r.status === 200)).toHaveLength(1);
    expect(mock.getWithdrawal(params.reference_id)).toMatchObject({ amount: 250, status: 'FAILED' });
  });

  it('when the first request never reached processing, recover creates the withdrawal once', async () => {
    const { gateway } = clientFor(mock);
    const params = withdrawalParams();
    mock.fault({ endpoint: 'withdraw', response: { type: 'status', status: 502, code: 'GATEWAY_ERROR' } });
    expect(await caught(gateway.withdrawals.create(params))).toBeInstanceOf(OutcomeUnknownError);
    const recovery = await gateway.withdrawals.recover(params);
    expect(recovery.created).toBe(true);
    if (recovery.created) expect(recovery.withdrawal.reference_id).toBe(params.reference_id);
    expect(mock.requests.filter((r) => r.endpoint === 'withdraw' && r.status === 200)).toHaveLength(1);
  });

  it('an ambiguous failure of recover itself is outcome unknown again, and it is not resent', async () => {
    const { gateway, delays } = clientFor(mock);
    const params = withdrawalParams();
    mock.fault({
      endpoint: 'withdraw',
      when: 'after',
      response: { type: 'status', status: 504, code: 'GATEWAY_TIMEOUT' },
    });
    const error = await caught(gateway.withdrawals.recover(params));
    expect(error).toBeInstanceOf(OutcomeUnknownError);
    expect(error.referenceId).toBe(params.reference_id);
    expect(error.message).toContain('withdrawals.recover with the same params');
    expect(mock.count('withdraw')).toBe(1);
    expect(delays).toEqual([]);
  });

  it('a 429 before processing is retried, like create', async () => {
    const { gateway } = clientFor(mock);
    const params = withdrawalParams();
    mock.fault({ endpoint: 'withdraw', response: { type: 'rateLimit', retryAfter: 1 } });
    const recovery = await gateway.withdrawals.recover(params);
    expect(recovery.created).toBe(true);
    expect(mock.count('withdraw')).toBe(2);
  });

  it('validates like create, before sending anything, and the error names the reference', async () => {
    const { gateway } = clientFor(mock);
    const error = await caught(gateway.withdrawals.recover({ ...withdrawalParams(), amount: 10 }));
    expect(error.code).toBe('INVALID_AMOUNT');
    expect(error.referenceId).toMatch(/^PAYOUT/);
    expect(mock.count()).toBe(0);
  });

  it('other refusals are thrown with the reference id', async () => {
    const { gateway } = clientFor(mock);
    const params = { ...withdrawalParams(), bank_code: 'NOSUCHBANK' };
    const error = await caught(gateway.withdrawals.recover(params));
    expect(error.code).toBe('INVALID_BANK_CODE');
    expect(error.referenceId).toBe(params.reference_id);
  });
});

describe('a 2xx that is not a valid success is never a success', () => {
  const withUrl = (reference: string, extra: Record<string, unknown>) => ({
    status: 'success',
    data: {
      payment_id: 'PAY_X1',
      payment_url: 'https://pay.example/PAY_X1',
      status: 'PROCESSING',
      amount: 120.5,
      currency: 'MYR',
      reference_id: reference,
      gateway: { behavior: 'REDIRECT_EXTERNAL', redirect_url: 'https://bank.example/PAY_X1' },
      ...extra,
    },
  });

  it.each([
    ['{status:"error"} with 200', () => ({ status: 'error', error: 'GATEWAY_ERROR', message: 'upstream failed' })],
    ['another reference_id echoed', (ref: string) => withUrl(ref, { reference_id: `${ref}X` })],
    ['another amount echoed', (ref: string) => withUrl(ref, { amount: 1205 })],
    ['another amount echoed as a string', (ref: string) => withUrl(ref, { amount: '1205.00' })],
    ['a javascript: payment_url', (ref: string) => withUrl(ref, { payment_url: 'javascript:alert(document.cookie)' })],
    ['an http: payment_url', (ref: string) => withUrl(ref, { payment_url: 'http://pay.example/PAY_X1' })],
    [
      'a data: gateway.redirect_url',
      (ref: string) =>
        withUrl(ref, { gateway: { behavior: 'REDIRECT_EXTERNAL', redirect_url: 'data:text/html,<script>1</script>' } }),
    ],
  ])('payment create: %s is InvalidResponseError with the reference id and how to follow up', async (_label, body) => {
    const { gateway } = clientFor(mock);
    const params = paymentParams('MOBILE_WALLET');
    mock.fault({
      endpoint: 'payment.create',
      response: { type: 'body', status: 200, body: body(params.reference_id) },
    });
    const error = await caught(gateway.payments.create(params));
    expect(error).toBeInstanceOf(InvalidResponseError);
    expect(error.referenceId).toBe(params.reference_id);
    expect(error.message).toContain('may have been created');
    expect(mock.count('payment.create')).toBe(1);
  });

  it('a numeric-string amount equal to the one sent is accepted (A13)', async () => {
    const { gateway } = clientFor(mock);
    const params = paymentParams('MOBILE_WALLET');
    mock.fault({
      endpoint: 'payment.create',
      response: { type: 'body', status: 200, body: withUrl(params.reference_id, { amount: '120.50' }) },
    });
    const payment = await gateway.payments.create(params);
    expect(payment.amount).toBe(120.5);
  });

  it.each([
    ['{status:"error"} with 200', () => ({ status: 'error', error: 'GATEWAY_ERROR' })],
    [
      'another reference_id echoed',
      (ref: string) => ({ status: 'success', data: { reference_id: `${ref}X`, status: 'PROCESSING' } }),
    ],
    [
      'another amount echoed',
      (ref: string) => ({ status: 'success', data: { reference_id: ref, amount: 2500, status: 'PROCESSING' } }),
    ],
  ])('withdrawal create: %s is InvalidResponseError that says do not resend', async (_label, body) => {
    const { gateway } = clientFor(mock);
    const params = withdrawalParams();
    mock.fault({ endpoint: 'withdraw', response: { type: 'body', status: 200, body: body(params.reference_id) } });
    const error = await caught(gateway.withdrawals.create(params));
    expect(error).toBeInstanceOf(InvalidResponseError);
    expect(error.referenceId).toBe(params.reference_id);
    expect(error.message).toContain('withdrawals.recover');
    expect(mock.count('withdraw')).toBe(1);
  });

  it('a status record for another payment than the one asked for is not shown as it', async () => {
    const { gateway } = clientFor(mock);
    const created = await gateway.payments.create(paymentParams());
    const other = {
      payment_id: 'PAY_OTHER',
      reference_id: 'SOMEONEELSE',
      amount: 9,
      currency: 'MYR',
      status: 'SUCCESS',
      created_at: '2026-01-01T00:00:00Z',
    };
    mock.fault({ endpoint: 'payment.status', response: { type: 'body', body: { status: 'success', data: other } } });
    const error = await caught(gateway.payments.retrieve(created.reference_id));
    expect(error).toBeInstanceOf(InvalidResponseError);
  });
});

describe('every error of a money-moving call carries its reference id', () => {
  it.each([
    ['a 400', { type: 'status', status: 400, code: 'VALIDATION_ERROR' } as const],
    ['a 403', { type: 'status', status: 403, code: 'MERCHANT_LOCKED' } as const],
    ['a 429 beyond maxDelayMs', { type: 'rateLimit', retryAfter: 3600 } as const],
  ])('payment create: %s', async (_label, response) => {
    const { gateway } = clientFor(mock);
    const params = paymentParams();
    mock.fault({ endpoint: 'payment.create', response });
    const error = await caught(gateway.payments.create(params));
    expect(error).toBeInstanceOf(MyrGatewayError);
    expect(error.referenceId).toBe(params.reference_id);
    expect(JSON.parse(JSON.stringify(error)).referenceId).toBe(params.reference_id);
  });

  it('a lookup error of payments.retrieve carries none (it is not a money-moving call)', async () => {
    const { gateway } = clientFor(mock);
    const error = await caught(gateway.payments.retrieve('NOSUCH1'));
    expect(error).toBeInstanceOf(NotFoundError);
    expect(error.referenceId).toBeUndefined();
  });
});

it('printed no warning but the one about the 20+ clients these tests create', () => {
  expect(consoleWarnings.lines).toEqual([expect.stringMatching(MANY_CLIENTS_WARNING)]);
});
